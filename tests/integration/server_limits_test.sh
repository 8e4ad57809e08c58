#!/usr/bin/env bash
# Every ferry server under abuse, while a well-behaved client probes it five
# times a second (tests/integration/abuse.py):
#   - 10,000 idle connections (the default --max-connections): the server
#     holds them, new clients take the oldest idle one's place, and its
#     memory stays bounded (RSS sampled under the load);
#   - slowloris: 200 connections sending a request head one line a second
#     are cut at --client-timeout;
#   - a request flood: 8 connections pipelining 4,000 requests each (4 and
#     8,000 for ferry server);
#   - the NBD server: 200 clients that never finish the handshake are cut
#     at --client-timeout, and a real client (qemu-io) reads meanwhile.
# Servers: `ferry cache serve`, `ferry volume serve` (its API and NBD) and
# `ferry server`. Every probe must be answered 200, none slower than 2 s
# (6 s under a sanitizer).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cache_lib.sh"
need curl
need qemu-io
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" -ge 20000 ] || skip "open-file limit $(ulimit -n) is too low for 10,000 connections"
ABUSE="$FERRY_SOURCE/tests/integration/abuse.py"
IDLE=10000

# The slowest probe allowed: 2 s, three times that under a sanitizer (which
# makes every accept and request several times slower).
PROBE_LIMIT_MS=2000
[ -n "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}" ] && PROBE_LIMIT_MS=6000

rss_mb() { awk '/^VmRSS/ { printf "%d", $2 / 1024 }' "/proc/$1/status"; }

# check NAME JSON: every probe answered 200, the slowest under 2 s.
check() {
  local name=$1 out=$2
  echo "$name: $out"
  /usr/bin/python3 - "$out" "$name" "$PROBE_LIMIT_MS" <<'PY' || fail "$name: probes failed or were slow: $out"
import json, sys
r = json.loads(sys.argv[1])
assert r["probes"] >= 3, "too few probes"
assert r["probes_ok"] == r["probes"], "a probe was not answered 200"
assert r["probe_max_ms"] < float(sys.argv[3]), "a probe took %s ms" % r["probe_max_ms"]
# (How many idle connections the server closed to make room depends on how
# many it had accepted when the probes came: printed, not checked here;
# NetServer.AtTheLimitANewClientReclaimsTheOldestIdleConnection checks it.)
PY
}

# attack NAME PID ARGS...: runs abuse.py ARGS, sampling the server's RSS
# halfway; sets OUT and PEAK_RSS.
attack() {
  local name=$1 pid=$2
  shift 2
  /usr/bin/python3 "$ABUSE" "$@" >"$TMP/$name.json" &
  local a=$!
  PEAK_RSS=$(rss_mb "$pid")
  while kill -0 "$a" 2>/dev/null; do
    local now
    now=$(rss_mb "$pid")
    [ "$now" -gt "$PEAK_RSS" ] && PEAK_RSS=$now
    sleep 0.5
  done
  wait "$a" || fail "$name: abuse.py failed"
  OUT=$(cat "$TMP/$name.json")
}

# idle_and_slowloris TAG NAME PID PORT PROBE_URL: the first two attacks.
idle_and_slowloris() {
  attack "$1-idle" "$3" idle "$4" "$IDLE" 2 "$5"
  check "$2, $IDLE idle connections" "$OUT"
  echo "$2 RSS: $PEAK_RSS MB at most with $IDLE idle connections"
  attack "$1-slow" "$3" slowloris "$4" 200 8 "$5"
  check "$2, slowloris" "$OUT"
}

# --- ferry cache serve -------------------------------------------------------------------
mkdir -p "$TMP/site"
seq 1 2000 | sed 's/^/line /' >"$TMP/site/page.txt"
start_static_origin "$TMP/site"
start_cache_named c --origin "$ORIGIN" --dir "$TMP/cache" --client-timeout 3s
CPORT=$(cat "$TMP/c.port")
curl -sf "$C/page.txt" >/dev/null || fail "cache: no first answer"
base=$(rss_mb "$CACHE_PID")

attack cache-idle "$CACHE_PID" idle "$CPORT" "$IDLE" 2 "$C/page.txt"
check "cache, $IDLE idle connections" "$OUT"
echo "cache RSS: $base MB before, $PEAK_RSS MB at most with $IDLE idle connections"
# (Not under a sanitizer: ASan's shadow memory and quarantine are not the cache's.)
if [ -z "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}" ]; then
  [ "$PEAK_RSS" -lt $((base + 400)) ] || fail "cache RSS grew by $((PEAK_RSS - base)) MB under idle connections"
fi

attack cache-slow "$CACHE_PID" slowloris "$CPORT" 200 10 "$C/page.txt"
check "cache, slowloris" "$OUT"
/usr/bin/python3 -c "import json,sys; r=json.loads(sys.argv[1]); sys.exit(0 if r['closed_by_server'] == 200 and r['last_closed_s'] <= 6 else 1)" "$OUT" ||
  fail "cache: slowloris connections not cut at the 3 s client timeout"

attack cache-flood "$CACHE_PID" flood "$CPORT" 8 4000 /page.txt "$C/page.txt"
check "cache, request flood" "$OUT"
/usr/bin/python3 -c "import json,sys; sys.exit(0 if json.loads(sys.argv[1])['answered'] >= 32000 else 1)" "$OUT" ||
  fail "cache: the flood was not answered whole"
echo "cache RSS after the flood: $(rss_mb "$CACHE_PID") MB (peak $PEAK_RSS MB)"
cmp <(curl -sf "$C/page.txt") "$TMP/site/page.txt" || fail "cache: the page changed"

# --- ferry volume serve: the API and NBD ----------------------------------------------------
make_file "$TMP/disk.img" $((4 << 20))
"$FERRY" snapshot create "$TMP/disk.img" "$TMP/repo/disk" --chunk-size 1M >/dev/null
start_volume_daemon --pool "$TMP/pool" --client-timeout 3s
vol create v --from "$TMP/repo/disk" >/dev/null
API_URL="http://127.0.0.1:$API/volumes"

idle_and_slowloris vol "volume API" "$DAEMON_PID" "$API" "$API_URL"

/usr/bin/python3 "$ABUSE" nbd-idle "$NBD" 200 5 >"$TMP/nbd.json" &
A=$!
sleep 1
qemu-io -f raw -c "read -P 0 0 0" -c "read 0 1M" "nbd://127.0.0.1:$NBD/v" | grep -q 'read 1048576' ||
  fail "NBD: a real client could not read while 200 handshakes hung"
wait "$A"
echo "NBD, 200 stalled handshakes: $(cat "$TMP/nbd.json")"
/usr/bin/python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r['greeted'] == 200 and r['closed_by_server'] == 200 else 1)" "$TMP/nbd.json" ||
  fail "NBD: stalled handshakes were not all greeted and cut"
qemu-img compare -f raw -F raw "nbd://127.0.0.1:$NBD/v" "$TMP/disk.img" >/dev/null || fail "NBD: the volume is not its image"

# --- ferry server ------------------------------------------------------------------------------
use_state
SPORT=$(free_port)
"$FERRY" server --state "$STATE" --listen "127.0.0.1:$SPORT" --client-timeout 3 >"$TMP/server.log" 2>&1 &
SPID=$!
PIDS+=($SPID)
wait_port "$SPORT"
S_URL="http://127.0.0.1:$SPORT/v1/jobs"

idle_and_slowloris srv "ferry server" "$SPID" "$SPORT" "$S_URL"
attack srv-flood "$SPID" flood "$SPORT" 4 8000 /v1/jobs "$S_URL"
check "ferry server, request flood" "$OUT"
echo "server limits: OK"
