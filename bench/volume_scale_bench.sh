#!/usr/bin/env bash
# One volume daemon with many volumes of one snapshot: what each costs.
#
#   bench/volume_scale_bench.sh BUILD_DIR [--volumes 1000] [--connections 1000] [--seconds 20]
#
# The snapshot: 256 MiB of AES-CTR bytes (fixed key: the same everywhere)
# in 1 MiB chunks, in ferry-test-s3 (no added latency: this measures the
# daemon). Measured in one run:
#   create      `ferry volume create --count N`: seconds for the call
#   RSS         the daemon's resident memory before the volumes, after them,
#               and with C idle NBD connections (each negotiated with GO and
#               left idle, spread over the volumes): per volume, per connection
#   API         GET /volumes (every volume's status) and GET /metrics:
#               median ms of 10 calls, and the body's size
#   fairness    hydration capped at 64 MB/s for the pool for SECONDS: the
#               fewest and most chunks any volume has hydrated, and the
#               object store's GETs (the transfer cache: each chunk once)
set -euo pipefail
usage() { echo "usage: $0 BUILD_DIR [--volumes N] [--connections N] [--seconds N]" >&2; exit 2; }
[ $# -ge 1 ] || usage
BUILD=$(cd "$1" && pwd)
shift
VOLUMES=1000 CONNS=1000 SECONDS_=20
while [ $# -gt 0 ]; do
  case "$1" in
    --volumes) VOLUMES=${2:?}; shift 2 ;;
    --connections) CONNS=${2:?}; shift 2 ;;
    --seconds) SECONDS_=${2:?}; shift 2 ;;
    *) usage ;;
  esac
done
cd "$(dirname "$0")/.."
FERRY="$BUILD/ferry"
. bench/bench_lib.sh
bench_begin volume-scale
rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }

log "a 256 MiB snapshot in the test server"
{ openssl enc -aes-128-ctr -K 000102030405060708090a0b0c0d0e0f -iv 00000000000000000000000000000000 -nosalt \
  </dev/zero 2>/dev/null || true; } | head -c $((256 << 20)) >"$TMP/image.raw"  # (openssl ends on SIGPIPE)
start_test_s3 --retain-memory
"$FERRY" snapshot create "$TMP/image.raw" s3://bench/snaps/img >/dev/null
rm -f "$TMP/image.raw"
gets() { curl -sf "$S3/_admin/stats" | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['ops'].get('get', {}).get('requests', 0))"; }

# Hydration off (1 byte/s) until the fairness step.
"$FERRY" volume serve --pool "$TMP/pool" --nbd 127.0.0.1:0 --api 127.0.0.1:0 --port-file "$TMP/ports" \
  --hydration-rate 1 --overcommit 100 >"$TMP/daemon.log" 2>&1 &
DAEMON=$!
PIDS+=($DAEMON)
for _ in $(seq 1 100); do [ -s "$TMP/ports" ] && break; sleep 0.1; done
read -r NBD API <"$TMP/ports"
API_URL="http://127.0.0.1:$API"
sleep 0.5
RSS0=$(rss_kib "$DAEMON")

log "create --count $VOLUMES"
t0=$(now_ms)
"$FERRY" volume create v --from s3://bench/snaps/img --count "$VOLUMES" --api "127.0.0.1:$API" >/dev/null
T_CREATE=$(( $(now_ms) - t0 ))
sleep 1
RSS1=$(rss_kib "$DAEMON")

log "$CONNS idle NBD connections"
/usr/bin/python3 - "$NBD" "$CONNS" "$VOLUMES" "$TMP/conns.ready" <<'PY' &
import socket, struct, sys, time
port, n, volumes, ready = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
socks = []
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.recv(18, socket.MSG_WAITALL)
    s.sendall(struct.pack(">I", 3))  # fixed newstyle, no zeroes
    name = ("v-%d" % (i % volumes)).encode()
    s.sendall(struct.pack(">QII", 0x49484156454F5054, 7, 4 + len(name) + 2) + struct.pack(">I", len(name)) + name + b"\0\0")
    while True:
        h = s.recv(20, socket.MSG_WAITALL)
        _, _, typ, ln = struct.unpack(">QIII", h)
        if ln:
            s.recv(ln, socket.MSG_WAITALL)
        if typ == 1:
            break
        if typ & 0x80000000:
            sys.exit("GO refused for %s" % name)
    socks.append(s)
open(ready, "w").write("%d\n" % len(socks))
time.sleep(3600)
PY
CONN_PID=$!
PIDS+=($CONN_PID)
for _ in $(seq 1 600); do [ -s "$TMP/conns.ready" ] && break; sleep 0.1; done
[ -s "$TMP/conns.ready" ] || die "the idle connections did not all open"
sleep 1
RSS2=$(rss_kib "$DAEMON")

log "the API with $VOLUMES volumes"
api_ms() {  # api_ms PATH: "median_ms bytes"
  local i t0 out=()
  for i in $(seq 1 10); do
    t0=$(date +%s%N)
    curl -sf -o "$TMP/body" "$API_URL$1"
    out+=($(( ($(date +%s%N) - t0) / 1000 )))
  done
  printf '%s\n' "${out[@]}" | sort -n | awk -v b="$(stat -c %s "$TMP/body")" '{ v[NR] = $1 } END { printf "%.1f %d\n", v[int((NR + 1) / 2)] / 1000, b }'
}
read -r API_LS API_LS_BYTES <<<"$(api_ms /volumes)"
read -r API_METRICS API_METRICS_BYTES <<<"$(api_ms /metrics)"

log "hydration for ${SECONDS_} s at 64 MB/s"
kill "$DAEMON"; wait "$DAEMON" 2>/dev/null || true
kill "$CONN_PID" 2>/dev/null || true
rm -f "$TMP/ports"
G0=$(gets)
"$FERRY" volume serve --pool "$TMP/pool" --nbd 127.0.0.1:0 --api 127.0.0.1:0 --port-file "$TMP/ports" \
  --hydration-rate 64M --overcommit 100 >>"$TMP/daemon.log" 2>&1 &
DAEMON=$!
PIDS+=($DAEMON)
for _ in $(seq 1 100); do [ -s "$TMP/ports" ] && break; sleep 0.1; done
read -r NBD API <"$TMP/ports"
sleep "$SECONDS_"
read -r MIN MAX TOTAL <<<"$(curl -sf "http://127.0.0.1:$API/volumes" | /usr/bin/python3 -c '
import json, sys
v = [x["hydrated"] for x in json.load(sys.stdin)]
print(min(v), max(v), sum(v))')"
FAIR_GETS=$(( $(gets) - G0 ))

per() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.1f", (b - a) / n }'; }
echo "### One daemon, $VOLUMES volumes of one snapshot ($(date -u +%Y-%m-%d), $(nproc) cores)"
echo
echo "| measure | value |"
echo "|---|---|"
echo "| \`volume create --count $VOLUMES\` | $(awk -v t="$T_CREATE" 'BEGIN { printf "%.2f s", t / 1000 }') |"
echo "| daemon RSS: none / $VOLUMES volumes / + $CONNS idle NBD connections | $((RSS0 / 1024)) / $((RSS1 / 1024)) / $((RSS2 / 1024)) MiB |"
echo "| RSS per volume | $(per "$RSS0" "$RSS1" "$VOLUMES") KiB |"
echo "| RSS per idle NBD connection | $(per "$RSS1" "$RSS2" "$CONNS") KiB |"
echo "| GET /volumes (all $VOLUMES) | $API_LS ms, $API_LS_BYTES bytes |"
echo "| GET /metrics | $API_METRICS ms, $API_METRICS_BYTES bytes |"
echo "| hydration, ${SECONDS_} s at 64 MB/s: chunks per volume, fewest / most (total) | $MIN / $MAX ($TOTAL) |"
echo "| GETs from the object store meanwhile | $FAIR_GETS |"
