#!/usr/bin/env bash
# What a prefetch order is worth to one booting clone, and what a wrong one
# costs, on an image with far more data than its boot reads.
#
#   bench/volume_order_bench.sh BUILD_DIR [--rounds 5] [--latency-ms 20]
#       [--bandwidth 200M] [--filler-mib 1600] [--trace testing/traces/vm_boot.trace]
#
# The image: FILLER MiB of random bytes, then make_rootfs.sh's 64 MiB file
# system (the one the recorded boot testing/traces/vm_boot.trace read) as
# the disk's one MBR partition; the boot is replayed that far into the disk
# (ferry-nbd-replay --offset). Background hydration goes in index order
# once a prefetch order is in, so it has FILLER MiB to fetch before the
# boot's chunks, as on the 3 GiB image of a new user's trial. Snapshotted in the default 1 MiB chunks
# into ferry-test-s3, which then adds LATENCY ms to each request and shares
# BANDWIDTH bytes/s among all of them.
#
# Each round is a fresh `ferry volume serve` (daemon defaults: background
# hydration on) with one clone, and ferry-nbd-replay replaying the boot on
# it (think times as recorded, reads compared with the image). Variants:
#   local      the same replay on a clone whose every chunk is local
#              (hydrated whole before the replay)
#   none       a snapshot with no prefetch order (--no-predict)
#   wrong      an order of 200 chunks the boot never reads (recorded from a
#              volume whose client read 200 MiB of the filler): what it may
#              cost is its bytes, never the guest's wait
#   predicted  snapshot create's predicted boot set (the default)
#   learned    a snapshot that starts with no order, on daemons run with
#              --learn-orders: round k boots from the order k-1 clones taught
# VOLUME_SERVE_ARGS: more `volume serve` flags for every daemon here.
# Reported per variant: boot time (first request to last reply) median,
# min and max over the rounds, the median against local's, reads that
# waited on a fetch (the daemon's triggers) and the origin's bytes by the
# end of the boot.
set -euo pipefail
usage() {
  echo "usage: $0 BUILD_DIR [--rounds N] [--latency-ms MS] [--bandwidth B] [--filler-mib N] [--trace FILE]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
BUILD=$(cd "$1" && pwd)
shift
ROUNDS=5 LATENCY_MS=20 BANDWIDTH=200M FILLER_MIB=1600 TRACE=
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=${2:?}; shift 2 ;;
    --latency-ms) LATENCY_MS=${2:?}; shift 2 ;;
    --bandwidth) BANDWIDTH=${2:?}; shift 2 ;;
    --filler-mib) FILLER_MIB=${2:?}; shift 2 ;;
    --trace) TRACE=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
    *) usage ;;
  esac
done
cd "$(dirname "$0")/.."
TRACE=${TRACE:-$PWD/testing/traces/vm_boot.trace}
FERRY="$BUILD/ferry"
REPLAY="$BUILD/ferry-nbd-replay"
. bench/bench_lib.sh
bench_begin volume-order
[ -x /sbin/mke2fs ] || { echo "volume-order: e2fsprogs (mke2fs) not installed" >&2; exit 77; }
command -v qemu-io >/dev/null ||
  { echo "volume-order: qemu-utils (qemu-io) not installed" >&2; exit 77; }
BW_BYTES=$(numfmt --from=iec "$BANDWIDTH")
LEARN=0
case "$("$FERRY" volume serve --help)" in *--learn-orders*) LEARN=1 ;; esac

log "the image: $FILLER_MIB MiB of random bytes, then make_rootfs.sh's 64 MiB in an MBR partition"
testing/vm/make_rootfs.sh "$TMP/root.img" 64 2>"$TMP/rootfs.log" || { cat "$TMP/rootfs.log" >&2; die "make_rootfs.sh"; }
OFFSET=$((FILLER_MIB << 20))
head -c "$OFFSET" /dev/urandom >"$TMP/disk.img"
cat "$TMP/root.img" >>"$TMP/disk.img"
/usr/bin/python3 -c '
import struct, sys
entry = struct.pack("<B3sB3sII", 0, b"\xfe\xff\xff", 0x83, b"\xfe\xff\xff", int(sys.argv[2]), int(sys.argv[3]))
with open(sys.argv[1], "r+b") as f:
    f.seek(446)
    f.write(entry + bytes(48) + b"\x55\xaa")
' "$TMP/disk.img" "$((OFFSET / 512))" "$(((64 << 20) / 512))"
start_test_s3 --no-auth --retain-memory
SNAPS=s3://bench/snaps
"$FERRY" snapshot create "$TMP/disk.img" $SNAPS/none --no-predict >/dev/null
"$FERRY" snapshot create "$TMP/disk.img" $SNAPS/predicted >/dev/null
"$FERRY" snapshot create "$TMP/disk.img" $SNAPS/wrong --no-predict >/dev/null
s3_get() { curl -sf "$S3/_admin/stats" | /usr/bin/python3 -c "import json,sys; g=json.load(sys.stdin)['ops'].get('get', {}); print(g.get('bytes_out', 0))"; }

# start_daemon [ARGS...]: a fresh daemon; sets DPID, NBD, API.
start_daemon() {
  rm -rf "$TMP/run"
  mkdir -p "$TMP/run"
  "$FERRY" volume serve --pool "$TMP/run/pool" --nbd 127.0.0.1:0 --api 127.0.0.1:0 \
    --port-file "$TMP/run/ports" ${VOLUME_SERVE_ARGS:-} "$@" >"$TMP/run/log" 2>&1 &
  DPID=$!
  PIDS+=($DPID)
  for _ in $(seq 1 100); do [ -s "$TMP/run/ports" ] && break; sleep 0.1; done
  [ -s "$TMP/run/ports" ] || { cat "$TMP/run/log" >&2; die "volume daemon did not start"; }
  read -r nbd api <"$TMP/run/ports"
  NBD="127.0.0.1:$nbd" API="127.0.0.1:$api"
}
stop_daemon() {
  kill "$DPID" 2>/dev/null || true
  wait "$DPID" 2>/dev/null || true
}

log "the wrong order: a volume whose client read 200 MiB of the filler"
admin POST /_admin/faults '{}' >/dev/null
start_daemon
"$FERRY" volume create w --from $SNAPS/wrong --api "$API" >/dev/null
qemu-io -r -f raw "nbd://$NBD/w" -c "read 96M 200M" >/dev/null  # of the filler
"$FERRY" snapshot prefetch $SNAPS/wrong --from-volume w --api "$API" >/dev/null
stop_daemon
admin POST /_admin/faults "{\"latency_ms\": $LATENCY_MS, \"bandwidth_total\": $BW_BYTES}" >/dev/null

# replay NBD_ADDR EXPORT: one guest; prints boot ms.
replay() {
  "$REPLAY" --trace "$TRACE" --nbd "$1" --export "$2" --guests 1 --timeout 600 --check-image "$TMP/disk.img" \
    --offset "$OFFSET" \
    >"$TMP/replay.json" 2>"$TMP/replay.err" || { cat "$TMP/replay.json" "$TMP/replay.err" >&2; die "the replay failed"; }
  /usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["read_mismatches"] == 0; print(j["boot_ms"]["p50"])' "$TMP/replay.json"
}
metric() { curl -sf "http://$API/metrics" | awk -v m="$1" '$1 ~ "^"m"({|$)" { s += $2 } END { print s + 0 }'; }

# round VARIANT SNAPSHOT R [DAEMON ARGS...]
round() {
  local variant=$1 snap=$2 r=$3
  shift 3
  start_daemon "$@"
  "$FERRY" volume create v --from "$SNAPS/$snap" --api "$API" >/dev/null
  if [ "$variant" = local ]; then
    for _ in $(seq 1 1200); do
      "$FERRY" volume status v --api "$API" --json |
        /usr/bin/python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)["state"] != "hydrated")' && break
      sleep 0.1
    done
  fi
  curl -sf -X POST "$S3/_admin/reset" >/dev/null
  local ms waited wait_s bytes
  ms=$(replay "$NBD" v)
  bytes=$(s3_get)
  waited=$(metric ferry_volume_triggers_total)
  wait_s=$(metric ferry_volume_trigger_wait_seconds_sum)
  echo "{\"variant\": \"$variant\", \"round\": $r, \"boot_ms\": $ms, \"waited\": $waited, \"wait_s\": $wait_s, \"origin_bytes\": $bytes}" \
    >>"$TMP/rounds.jsonl"
  log "$variant round $r: $ms ms, $waited reads waited ($wait_s s in all), $((bytes >> 20)) MiB from the origin"
}

for variant in local none wrong predicted; do
  for r in $(seq 1 "$ROUNDS"); do
    round "$variant" "$([ "$variant" = local ] && echo none || echo "$variant")" "$r"
    stop_daemon
  done
done
if [ "$LEARN" = 1 ]; then
  "$FERRY" snapshot create "$TMP/disk.img" $SNAPS/learned --no-predict >/dev/null
  for r in $(seq 1 "$ROUNDS"); do
    round learned learned "$r" --learn-orders --learn-settle 2s
    # The daemon merges the clone's first touches once they settle.
    for _ in $(seq 1 100); do
      [ "$("$FERRY" snapshot info $SNAPS/learned --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin).get("learned_clones", 0))')" -ge "$r" ] && break
      sleep 0.2
    done
    stop_daemon
  done
else
  log "learned: not run (this ferry has no --learn-orders)"
fi

/usr/bin/python3 - "$TMP/rounds.jsonl" "$LATENCY_MS" "$BANDWIDTH" "$FILLER_MIB" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault(r["variant"], []).append(r)
local = statistics.median(r["boot_ms"] for r in by["local"])
print(f"One clone's boot (replayed), origin {sys.argv[2]} ms away with {sys.argv[3]}B/s, "
      f"64 MiB file system + {sys.argv[4]} MiB of other data, daemon defaults, {len(by['local'])} rounds")
print()
print("| variant | boot median | min - max | median / local | reads that waited | their wait, ms | origin MiB by boot end |")
print("|---|---|---|---|---|---|---|")
if "learned" in by:  # its first round had no order yet: a row of its own
    by["learned, first clone"] = [r for r in by["learned"] if r["round"] == 1]
    by["learned, later clones"] = [r for r in by["learned"] if r["round"] > 1]
for v in ["local", "none", "wrong", "predicted", "learned, first clone", "learned, later clones"]:
    if not by.get(v):
        continue
    b = [r["boot_ms"] for r in by[v]]
    w = statistics.median(r["waited"] for r in by[v])
    ws = statistics.median(r.get("wait_s", 0) for r in by[v]) * 1000
    o = statistics.median(r["origin_bytes"] for r in by[v]) / (1 << 20)
    print(f"| {v} | {statistics.median(b) / 1000:.2f} s | {min(b) / 1000:.2f} - {max(b) / 1000:.2f} s | "
          f"{statistics.median(b) / local:.2f}x | {w:g} | {ws:.0f} | {o:.0f} |")
EOF
