#!/usr/bin/env bash
# Chaos, cache: an edge `ferry cache serve` filling from an upper tier
# (--parent) that fills from the origin, both with 4 MiB of memory, and
# 400 pages of 200 KB (80 MB: far more than memory; zstd on disk) hammered
# by 8 HTTP/1.1 clients and 2 HTTP/2 ones over TLS (curl, 16 streams a
# connection, zstd/br/gzip; tests/chaos/cache_hammer.py checks every byte)
# while, for
# ROUNDS rounds, in turn: the origin is SIGKILLed and comes back a second
# later, the upper tier is SIGKILLed and started again on its port, or the
# edge itself is SIGKILLed and started again. Checked: no answer was ever
# a 200 with other bytes than the origin's (failures are clean: 5xx or a
# closed connection), the edge's and the tier's memory stays bounded
# (RSS sampled every half second), and after a last SIGKILL and restart
# every page the edge serves is whole.
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/../integration/cache_lib.sh"
need curl

ROUNDS=${ROUNDS:-9}
PAGES=400
HAMMER="$FERRY_SOURCE/tests/chaos/cache_hammer.py"

OPORT=$(free_port) UPORT=$(free_port) EPORT=$(free_port) TPORT=$(free_port)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=127.0.0.1 \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$TMP/key.pem" -out "$TMP/cert.pem" 2>/dev/null
start_origin_on() {
  /usr/bin/python3 "$FERRY_SOURCE/tests/integration/cache_origin.py" "$TMP/origin.port" "$OPORT" &
  OPID=$!
  PIDS+=($OPID)
  wait_port "$OPORT"
}
start_tier() {  # start_tier NAME PORT ARGS...: sets TIER_PID
  local name=$1 port=$2
  shift 2
  "$FERRY" cache serve --listen "127.0.0.1:$port" --dir "$TMP/$name" --memory-size 4M "$@" >>"$TMP/$name.log" 2>&1 &
  TIER_PID=$!
  PIDS+=($TIER_PID)
  wait_port "$port"
}
start_upper() { start_tier upper "$UPORT" --origin "http://127.0.0.1:$OPORT"; UPID=$TIER_PID; }
start_edge() {
  start_tier edge "$EPORT" --origin "http://127.0.0.1:$OPORT" --parent "http://127.0.0.1:$UPORT" \
    --listen-tls "127.0.0.1:$TPORT" --tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem"
  EPID=$TIER_PID
  wait_port "$TPORT"
}
start_origin_on
start_upper
start_edge
EDGE="http://127.0.0.1:$EPORT"
H2=(2 "https://127.0.0.1:$TPORT" "$TMP/cert.pem")

t0=$(date +%s)
/usr/bin/python3 "$HAMMER" "$EDGE" $PAGES 8 $((ROUNDS * 3 + 4)) "${H2[@]}" >"$TMP/hammer.json" &
HPID=$!
peak_e=0 peak_u=0
sample() {
  local e u
  e=$(awk '/^VmRSS/ { printf "%d", $2 / 1024 }' "/proc/$EPID/status" 2>/dev/null || echo 0)
  u=$(awk '/^VmRSS/ { printf "%d", $2 / 1024 }' "/proc/$UPID/status" 2>/dev/null || echo 0)
  [ "$e" -gt "$peak_e" ] && peak_e=$e
  [ "$u" -gt "$peak_u" ] && peak_u=$u
  return 0
}
for _ in 1 2 3 4; do sample; sleep 0.5; done
for round in $(seq 1 "$ROUNDS"); do
  case $((round % 3)) in
    1) kill -KILL "$OPID"; wait "$OPID" 2>/dev/null || true; echo "round $round: origin SIGKILLed for 1 s"
       for _ in 1 2; do sample; sleep 0.5; done; start_origin_on ;;
    2) kill -KILL "$UPID"; wait "$UPID" 2>/dev/null || true; echo "round $round: upper tier SIGKILLed, restarted"
       start_upper ;;
    0) kill -KILL "$EPID"; wait "$EPID" 2>/dev/null || true; echo "round $round: edge SIGKILLed, restarted"
       start_edge ;;
  esac
  for _ in 1 2 3 4; do sample; sleep 0.5; done
done
wait "$HPID" || fail "corrupt answers: $(cat "$TMP/hammer.json")"
/usr/bin/python3 -c "import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))['h2_ok'] > 0 else 1)" "$TMP/hammer.json" ||
  fail "no HTTP/2 client was answered: $(cat "$TMP/hammer.json")"
echo "hammer: $(cat "$TMP/hammer.json")"
echo "RSS peaks: edge $peak_e MB, upper tier $peak_u MB (4 MiB of memory entries each)"
# (Not under a sanitizer: ASan's shadow memory and quarantine are not the cache's.)
if [ -z "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}" ]; then
  [ "$peak_e" -lt 400 ] && [ "$peak_u" -lt 400 ] || fail "a tier's memory was not bounded: edge $peak_e MB, upper $peak_u MB"
fi

# A last SIGKILL of the edge: what it kept on disk must be whole.
kill -KILL "$EPID"; wait "$EPID" 2>/dev/null || true
start_edge
/usr/bin/python3 "$HAMMER" "$EDGE" $PAGES 4 5 "${H2[@]}" >"$TMP/after.json" || fail "corrupt after the restart: $(cat "$TMP/after.json")"
/usr/bin/python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r['clean_errors'] == 0 and r['ok'] >= 20 and r['h2_ok'] > 0 else 1)" "$TMP/after.json" ||
  fail "after the restart, with every tier up, answers failed: $(cat "$TMP/after.json")"
echo "after a last SIGKILL: $(cat "$TMP/after.json")"
echo "chaos/cache: OK in $(($(date +%s) - t0)) s"
