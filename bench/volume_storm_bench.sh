#!/usr/bin/env bash
# A boot storm: thousands of guests booting at once from lazy clones of one
# snapshot, spread over several volume daemons that share one origin
# through one cache tier, as a zone would.
#
#   bench/volume_storm_bench.sh BUILD_DIR [--counts "500 1000 2000 4000 8000"]
#       [--daemons 8] [--ramp-ms 3000] [--latency-ms 20] [--bandwidth 200M]
#       [--rps 1000] [--trace testing/traces/vm_boot.trace]
#
# The guests are ferry-nbd-replay's (testing/nbd_replay): each replays a real
# qemu boot recorded on a ferry volume (testing/traces/vm_boot.trace, made by
# tests/integration/vm_boot_test.sh: Debian's cloud kernel booting
# testing/vm/make_rootfs.sh's image under TCG) on its own NBD connection to
# its own volume, with the recorded requests, waits and think times, every
# read compared with the image. The image is made here the same way
# (make_rootfs.sh, 64 MiB) and snapshotted in 64 KiB chunks into
# ferry-test-s3, which then adds LATENCY ms to each request and caps the
# origin at BANDWIDTH bytes/s and RPS requests/s in all. One `ferry cache
# serve` stands in front of it (empty at each step); the daemons fetch chunks
# through it (--cache), hydration in the background held off (1 byte/s: the
# storm is the boots).
#
# First one guest alone (one daemon, empty cache tier): its boot time and
# the origin's bytes are the baselines. Then for each count N: fresh
# daemons, N/DAEMONS volumes each (`volume create --count`), N guests
# started evenly over RAMP ms. Reported per N:
#   boot time p50 / p99 / max     first request to last reply, per guest,
#                                 and p50 against the guest alone
#   origin bytes / GETs           what ferry-test-s3 sent, against the boot
#                                 set's (the guest alone)
#   trigger wait p50 / p99        the daemons' histogram of client waits for
#                                 missing chunks (interpolated in buckets)
#   metadata writes/s             bitmap group commits (a write and a sync
#                                 each) over the storm's wall time
#   per daemon                    peak RSS, CPU seconds, most open files;
#                                 each per guest
#   machine CPU busy              every process's CPU over wall x cores
#   local disk                    bytes the clones' hydrated chunks take
# A count whose clones would not fit the free disk is not run; the table
# says so. Each phase logs a line on stderr; the tables go to stdout.
set -euo pipefail
usage() {
  echo "usage: $0 BUILD_DIR [--counts LIST] [--daemons N] [--ramp-ms MS] [--latency-ms MS] [--bandwidth B] [--rps N] [--trace FILE]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
BUILD=$(cd "$1" && pwd)
shift
COUNTS="500 1000 2000 4000 8000" DAEMONS=8 RAMP_MS=3000 LATENCY_MS=20 BANDWIDTH=200M RPS=1000
TRACE=
while [ $# -gt 0 ]; do
  case "$1" in
    --counts) COUNTS=${2?}; shift 2 ;;
    --daemons) DAEMONS=${2:?}; shift 2 ;;
    --ramp-ms) RAMP_MS=${2:?}; shift 2 ;;
    --latency-ms) LATENCY_MS=${2:?}; shift 2 ;;
    --bandwidth) BANDWIDTH=${2:?}; shift 2 ;;
    --rps) RPS=${2:?}; shift 2 ;;
    --trace) TRACE=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
    *) usage ;;
  esac
done
cd "$(dirname "$0")/.."
TRACE=${TRACE:-$PWD/testing/traces/vm_boot.trace}
FERRY="$BUILD/ferry"
REPLAY="$BUILD/ferry-nbd-replay"
. bench/bench_lib.sh
bench_begin volume-storm
ulimit -n "$(ulimit -Hn)"
[ -x /sbin/mke2fs ] || { echo "volume-storm: e2fsprogs (mke2fs) not installed" >&2; exit 77; }
BW_BYTES=$(numfmt --from=iec "$BANDWIDTH")

log "the image (make_rootfs.sh, 64 MiB) and its snapshot in 64 KiB chunks"
testing/vm/make_rootfs.sh "$TMP/root.img" 64 2>"$TMP/rootfs.log" || { cat "$TMP/rootfs.log" >&2; die "make_rootfs.sh"; }
start_test_s3 --no-auth --retain-memory
"$FERRY" snapshot create "$TMP/root.img" s3://bench/snaps/root --chunk-size 64K --no-predict >/dev/null
admin POST /_admin/faults "{\"latency_ms\": $LATENCY_MS, \"bandwidth_total\": $BW_BYTES, \"requests_per_second\": $RPS}" >/dev/null

CACHE_PID=
start_cache() {
  [ -n "$CACHE_PID" ] && { kill "$CACHE_PID"; wait "$CACHE_PID" 2>/dev/null || true; }
  rm -rf "$TMP/cache" "$TMP/cache.port"
  "$FERRY" cache serve --origin "$S3" --listen 127.0.0.1:0 --port-file "$TMP/cache.port" --dir "$TMP/cache" \
    --default-ttl 1d >>"$TMP/cache.log" 2>&1 &
  CACHE_PID=$!
  PIDS+=($CACHE_PID)
  for _ in $(seq 1 100); do [ -s "$TMP/cache.port" ] && break; sleep 0.1; done
  [ -s "$TMP/cache.port" ] || { cat "$TMP/cache.log" >&2; die "ferry cache serve did not start"; }
  CACHE="http://127.0.0.1:$(cat "$TMP/cache.port")"
}

# start_daemons D: D daemons on pools $TMP/run/dK; sets DPIDS, NBDS, APIS.
start_daemons() {
  DPIDS=() NBDS=() APIS=()
  local k
  for k in $(seq 0 $(($1 - 1))); do
    mkdir -p "$TMP/run/d$k"
    "$FERRY" volume serve --pool "$TMP/run/d$k/pool" --nbd 127.0.0.1:0 --api 127.0.0.1:0 \
      --port-file "$TMP/run/d$k/ports" --cache "$CACHE/bench/snaps" --hydration-rate 1 --overcommit 100 \
      ${STORM_SERVE_ARGS:-} >"$TMP/run/d$k/log" 2>&1 &
    DPIDS+=($!)
    PIDS+=($!)
  done
  for k in $(seq 0 $(($1 - 1))); do
    for _ in $(seq 1 100); do [ -s "$TMP/run/d$k/ports" ] && break; sleep 0.1; done
    [ -s "$TMP/run/d$k/ports" ] || { cat "$TMP/run/d$k/log" >&2; die "volume daemon $k did not start"; }
    read -r nbd api <"$TMP/run/d$k/ports"
    NBDS+=("127.0.0.1:$nbd")
    APIS+=("127.0.0.1:$api")
  done
}
stop_daemons() {
  local p
  for p in "${DPIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${DPIDS[@]}"; do wait "$p" 2>/dev/null || true; done
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
s3_get() { curl -sf "$S3/_admin/stats" | /usr/bin/python3 -c "import json,sys; g=json.load(sys.stdin)['ops'].get('get', {}); print(g.get('requests', 0), g.get('bytes_out', 0))"; }

# storm N D: one step of the curve; appends a JSON line to $TMP/steps.jsonl.
storm() {
  local n=$1 d=$2 per k
  per=$(( (n + d - 1) / d ))
  start_cache
  rm -rf "$TMP/run"
  start_daemons "$d"
  log "$n guests on $d daemons: creating $per volumes each"
  local -a creates=()
  for k in $(seq 0 $((d - 1))); do
    "$FERRY" volume create v --from s3://bench/snaps/root --count "$per" --api "${APIS[$k]}" >/dev/null &
    creates+=($!)
  done
  for k in "${creates[@]}"; do wait "$k" || die "volume create failed"; done
  curl -sf -X POST "$S3/_admin/reset" >/dev/null
  local -a cpu0=()
  for k in $(seq 0 $((d - 1))); do cpu0+=("$(cpu_ticks "${DPIDS[$k]}")"); done
  local cache_cpu0 s3_cpu0
  cache_cpu0=$(cpu_ticks "$CACHE_PID")
  s3_cpu0=$(cpu_ticks "$(pgrep -f "ferry-test-s3 .*$TMP/s3.port" | head -1)")
  # Most open files per daemon, sampled each second while the guests run.
  (
    declare -A most=()
    while :; do
      for k in $(seq 0 $((d - 1))); do
        f=$(ls "/proc/${DPIDS[$k]}/fd" 2>/dev/null | wc -l)
        [ "$f" -gt "${most[$k]:-0}" ] && most[$k]=$f
      done
      for k in $(seq 0 $((d - 1))); do echo "$k ${most[$k]:-0}"; done >"$TMP/fds.tmp" && mv "$TMP/fds.tmp" "$TMP/fds"
      sleep 1
    done
  ) &
  local sampler=$!
  log "$n guests on $d daemons: replaying (start spread ${RAMP_MS} ms)"
  local nbd_args=() t0 t1 rc=0
  for k in $(seq 0 $((d - 1))); do nbd_args+=(--nbd "${NBDS[$k]}"); done
  t0=$(now_ms)
  /usr/bin/time -f '%e %U %S %M' -o "$TMP/replay.time" "$REPLAY" --trace "$TRACE" "${nbd_args[@]}" \
    --export "$([ "$per" -gt 1 ] && echo 'v-{i}' || echo v)" \
    --guests "$n" --ramp-ms "$([ "$n" -gt 1 ] && echo "$RAMP_MS" || echo 0)" --threads 2 --timeout 1800 \
    --check-image "$TMP/root.img" >"$TMP/replay.json" 2>"$TMP/replay.err" || rc=$?
  t1=$(now_ms)
  kill "$sampler" 2>/dev/null || true
  wait "$sampler" 2>/dev/null || true
  [ -s "$TMP/replay.json" ] || { cat "$TMP/replay.err" >&2; die "the replay printed nothing (exit $rc)"; }
  [ "$rc" = 0 ] || log "the replay failed: $(head -c 600 "$TMP/replay.json"; tail -3 "$TMP/replay.err")"
  log "$n guests: $(/usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("ok", j["ok"], "boot ms", j["boot_ms"], "reads", j["read_ms"]["count"], "errors", j["errors"])' "$TMP/replay.json")"
  for k in $(seq 0 $((d - 1))); do
    curl -sf "http://${APIS[$k]}/metrics" >"$TMP/run/d$k/metrics"
    echo "$k $(($(cpu_ticks "${DPIDS[$k]}") - cpu0[k])) $(awk '/^VmHWM/ { print $2 }' "/proc/${DPIDS[$k]}/status")" >>"$TMP/run/cost"
  done
  echo "cache $(($(cpu_ticks "$CACHE_PID") - cache_cpu0))" >>"$TMP/run/cost"
  echo "s3 $(($(cpu_ticks "$(pgrep -f "ferry-test-s3 .*$TMP/s3.port" | head -1)") - s3_cpu0))" >>"$TMP/run/cost"
  read -r gets bytes <<<"$(s3_get)"
  local disk
  disk=$(du -sB1 "$TMP/run" | cut -f1)  # allocated: the data files are sparse
  stop_daemons
  /usr/bin/python3 bench/volume_storm_step.py "$n" "$d" "$((t1 - t0))" "$gets" "$bytes" "$disk" "$TMP" \
    "$(getconf CLK_TCK)" "$(nproc)" >>"$TMP/steps.jsonl"
  rm -rf "$TMP/run"
}

storm 1 1
ALONE_DISK=$(tail -1 "$TMP/steps.jsonl" | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['disk_bytes'])")
for n in $COUNTS; do
  need=$(( n * ALONE_DISK * 11 / 10 + (4 << 30) ))
  free=$(( $(df -B1 --output=avail /tmp | tail -1) ))
  if [ "$need" -gt "$free" ]; then
    log "$n guests: not run: their clones need about $((need >> 30)) GiB of local disk, $((free >> 30)) GiB free"
    echo "{\"guests\": $n, \"skipped\": \"needs about $((need >> 30)) GiB of local disk for the clones' hydrated chunks, $((free >> 30)) GiB free\"}" >>"$TMP/steps.jsonl"
    continue
  fi
  storm "$n" "$DAEMONS"
done
/usr/bin/python3 bench/volume_storm_step.py --table "$TMP/steps.jsonl" "$LATENCY_MS" "$BANDWIDTH" "$RPS" "$RAMP_MS"
