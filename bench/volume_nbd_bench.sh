#!/usr/bin/env bash
# The NBD side of lazy volumes: what pipelining and block status buy.
#
#   bench/volume_nbd_bench.sh BUILD_DIR [--image-mib 256] [--runs 3]
#
# The image: IMAGE_MIB MiB in 1 MiB chunks, every other run of four chunks
# all zeros (half-empty; the data is AES-CTR of zeros under a fixed key, so
# every run and every machine has the same bytes), snapshotted into
# ferry-test-s3, which then adds 20 ms to every request and caps bodies at
# 200 MB/s in total, like bench/volume_bench.sh.
#
# Measured, each on a fresh volume of a fresh daemon (background hydration
# held to 1 byte/s, so what moves is what the client asks), median of RUNS
# runs with the range:
#   boot set, qd16   one qemu-io issuing 48 scattered 4 KiB reads with
#                    aio_read (qemu's NBD client keeps 16 in flight):
#                    --nbd-queue-depth 1 (one request at a time per
#                    connection, as before pipelining) beside the default
#   convert          qemu-img convert of the fresh volume to a local qcow2
#                    (block status: zero chunks are holes), nbdcopy to null:
#                    with and without --no-extents, and qemu-img convert
#                    through nbdkit (curl plugin on the raw image object,
#                    cow and cache filters: no block status; first run
#                    only, it takes 1.5 min): seconds and bytes the
#                    object store sent
set -euo pipefail
usage() { echo "usage: $0 BUILD_DIR [--image-mib N] [--runs N]" >&2; exit 2; }
[ $# -ge 1 ] || usage
BUILD=$(cd "$1" && pwd)
shift
IMAGE_MIB=256 RUNS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --image-mib) IMAGE_MIB=${2:?}; shift 2 ;;
    --runs) RUNS=${2:?}; shift 2 ;;
    *) usage ;;
  esac
done
cd "$(dirname "$0")/.."
FERRY="$BUILD/ferry"
for tool in /usr/bin/qemu-io /usr/bin/qemu-img /usr/bin/nbdcopy /usr/bin/nbdkit /usr/bin/openssl /usr/bin/curl; do
  [ -x "$tool" ] || { echo "volume_nbd_bench: $tool is missing: run make setup" >&2; exit 77; }
done
. bench/bench_lib.sh
bench_begin volume-nbd-bench

log "building a ${IMAGE_MIB} MiB half-empty image"
IMG="$TMP/image.raw"
{ openssl enc -aes-128-ctr -K 000102030405060708090a0b0c0d0e0f -iv 00000000000000000000000000000000 -nosalt \
  </dev/zero 2>/dev/null || true; } | head -c $((IMAGE_MIB << 20)) >"$TMP/data"  # (openssl ends on SIGPIPE)
/usr/bin/python3 - "$TMP/data" "$IMG" "$IMAGE_MIB" <<'PY'
import sys
src, out, n = open(sys.argv[1], "rb"), open(sys.argv[2], "wb"), int(sys.argv[3])
zero = bytes(1 << 20)
for i in range(n):
    chunk = src.read(1 << 20)
    out.write(zero if (i // 4) % 2 else chunk)
PY
rm -f "$TMP/data"
DATA_CHUNKS=$(( (IMAGE_MIB / 8) * 4 + (IMAGE_MIB % 8 < 4 ? IMAGE_MIB % 8 : 4) ))

start_test_s3 --no-auth --retain-memory
bytes_out() { admin GET /_admin/stats | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['ops'].get('get', {}).get('bytes_out', 0))"; }
log "snapshot and raw image into the test server"
"$FERRY" snapshot create "$IMG" s3://bench/snaps/half >/dev/null
"$FERRY" cp "$IMG" s3://bench/images/half.img >/dev/null
admin POST /_admin/faults '{"latency_ms": 20, "bandwidth_total": 200000000}' >/dev/null

DAEMON_PID=
start_daemon() {  # fresh pool, fresh transfer cache
  [ -n "$DAEMON_PID" ] && { kill "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true; }
  rm -rf "$TMP/pool" "$TMP/ports"
  "$FERRY" volume serve --pool "$TMP/pool" --nbd 127.0.0.1:0 --api 127.0.0.1:0 --port-file "$TMP/ports" \
    --hydration-rate 1 --overcommit 4 "$@" >>"$TMP/daemon.log" 2>&1 &
  DAEMON_PID=$!
  PIDS+=($DAEMON_PID)
  for _ in $(seq 1 100); do [ -s "$TMP/ports" ] && break; sleep 0.1; done
  [ -s "$TMP/ports" ] || { cat "$TMP/daemon.log" >&2; die "volume daemon did not start"; }
  read -r NBD API <"$TMP/ports"
  "$FERRY" volume create v --from s3://bench/snaps/half --api "127.0.0.1:$API" >/dev/null
}

# 48 reads of 4 KiB at scattered offsets inside data chunks.
AIO=$(/usr/bin/python3 - "$IMAGE_MIB" <<'PY'
import random, sys
n = int(sys.argv[1]); r = random.Random(18)
data = [i for i in range(n) if (i // 4) % 2 == 0]
print(" ".join("-c 'aio_read %d 4096'" % (c * 1048576 + r.randrange(0, 1048576 - 4096, 4096)) for c in r.sample(data, 48)))
PY
)
boot_qd16() {  # boot_qd16 DEPTH FILE: appends the ms for the 48 reads
  start_daemon --nbd-queue-depth "$1"
  local t0
  t0=$(now_ms)
  eval "qemu-io -f raw $AIO -c aio_flush nbd://127.0.0.1:$NBD/v" >"$TMP/aio.out" 2>&1 || die "qemu-io: $(tail -2 "$TMP/aio.out")"
  grep -q failed "$TMP/aio.out" && die "a read failed: $(grep failed "$TMP/aio.out" | head -1)"
  echo $(( $(now_ms) - t0 )) >>"$2"
}
convert() {  # convert HOW FILE: appends "ms bytes" (not in a subshell: the daemon it starts is ours)
  local b0 t0 t
  case "$1" in
    nbdkit)
      rm -f "$TMP/kit.sock"
      nbdkit -f -U "$TMP/kit.sock" --filter=cow --filter=cache curl url="$S3/bench/images/half.img" >>"$TMP/nbdkit.log" 2>&1 &
      KIT=$!
      PIDS+=($KIT)
      for _ in $(seq 1 100); do [ -S "$TMP/kit.sock" ] && break; sleep 0.05; done ;;
    *) start_daemon ;;
  esac
  b0=$(bytes_out)
  t0=$(now_ms)
  case "$1" in
    qemu-img) qemu-img convert -f raw -O qcow2 "nbd://127.0.0.1:$NBD/v" "$TMP/out.qcow2" ;;
    nbdcopy) nbdcopy "nbd://127.0.0.1:$NBD/v" null: ;;
    nbdcopy-no-extents) nbdcopy --no-extents "nbd://127.0.0.1:$NBD/v" null: ;;
    nbdkit) qemu-img convert -f raw -O qcow2 "nbd+unix:///?socket=$TMP/kit.sock" "$TMP/out.qcow2"
      kill "$KIT"; wait "$KIT" 2>/dev/null || true ;;
  esac
  t=$(( $(now_ms) - t0 ))
  echo "$t $(( $(bytes_out) - b0 ))" >>"$2"
  rm -f "$TMP/out.qcow2"
}

for r in $(seq 1 "$RUNS"); do
  log "run $r/$RUNS: boot set at qd16, depth 1 and 64"
  boot_qd16 1 "$TMP/qd1"
  boot_qd16 64 "$TMP/qd64"
  for how in qemu-img nbdcopy nbdcopy-no-extents nbdkit; do
    [ "$how" = nbdkit ] && [ "$r" -gt 1 ] && continue
    log "run $r/$RUNS: convert through $how"
    convert "$how" "$TMP/conv-$how"
  done
done

# median [COLUMN] < FILE: "median (min-max)"
median() {
  /usr/bin/python3 -c "
import sys, statistics
v = sorted(float(l.split()[int(sys.argv[1])]) for l in sys.stdin if l.strip())
print('%.2f (%.2f-%.2f)' % (statistics.median(v) / 1000, v[0] / 1000, v[-1] / 1000))" "${1:-0}"
}
mb() { /usr/bin/python3 -c "
import sys, statistics
v = [float(l.split()[1]) for l in sys.stdin if l.strip()]
print('%.1f' % (statistics.median(v) / 1e6))"; }

echo "### NBD: pipelining and block status ($(date -u +%Y-%m-%d), $(nproc) cores, median of $RUNS runs, range in brackets)"
echo
echo "${IMAGE_MIB} MiB image, half of it zero chunks ($DATA_CHUNKS data chunks of 1 MiB); ferry-test-s3 with 20 ms per request and 200 MB/s in total; each measurement on a fresh volume of a fresh daemon."
echo
echo "| 48 scattered 4 KiB reads, qemu-io aio (16 in flight), fresh volume | seconds |"
echo "|---|---|"
echo "| --nbd-queue-depth 1 (one request at a time, as before pipelining) | $(median <"$TMP/qd1") |"
echo "| --nbd-queue-depth 64 (default) | $(median <"$TMP/qd64") |"
echo
echo "| copy of a fresh lazy volume | seconds | MB from the object store |"
echo "|---|---|---|"
echo "| qemu-img convert to qcow2 (block status) | $(median <"$TMP/conv-qemu-img") | $(mb <"$TMP/conv-qemu-img") |"
echo "| nbdcopy to null: (block status) | $(median <"$TMP/conv-nbdcopy") | $(mb <"$TMP/conv-nbdcopy") |"
echo "| nbdcopy --no-extents to null: (every byte read) | $(median <"$TMP/conv-nbdcopy-no-extents") | $(mb <"$TMP/conv-nbdcopy-no-extents") |"
echo "| nbdkit curl + cow + cache, qemu-img convert to qcow2 (one run) | $(median <"$TMP/conv-nbdkit") | $(mb <"$TMP/conv-nbdkit") |"
