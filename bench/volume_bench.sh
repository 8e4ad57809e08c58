#!/usr/bin/env bash
# Lazy volumes: how soon a volume made from a snapshot is useful, beside
# downloading the whole image first (the traditional way), and what sharing
# the transfer cache saves.
#
#   bench/volume_bench.sh BUILD_DIR [--image-mib 2560] [--data-mb 1700] [--volumes 50]
#
# The image is a real ext4 file system (mke2fs -d) of IMAGE_MIB MiB holding
# exactly DATA_MB million bytes of files, a fixed set whatever else the
# machine has installed (bench/volume_bench_image.sh says what): the files
# of a pinned list of Debian packages that make setup installs (about
# 1.1 GB: compilers, Boost's headers, Node.js, awscli, rclone, PostgreSQL,
# LLVM, qemu, Perl, Python's stdlib and documentation), the boot set's
# programs and libraries, testing/vm/make_rootfs.sh's root (/init), and
# seeded pseudo-random filler up to the total. It is snapshotted (1 MiB
# chunks) into ferry-test-s3, which then adds 20 ms to every request and
# caps its bodies at 200 MB/s in total. The "boot set" is a recorded trace:
# the first MiB (superblock, group descriptors), then for python3.11, bash,
# coreutils' ls/cat/cp, grep and sed and every shared library ldd lists for
# them, the inode's block and the file's data blocks (debugfs on the local
# image), replayed with one qemu-io against the volume.
#
# Each phase prints a progress line on stderr with the seconds since the
# start; the tables go to stdout.
#
# Measured, all in one run:
#   full download      ferry cp of the raw image object (the same bytes as
#                      one object): the traditional first step
#   first read         volume create -> a 4 KiB read at the superblock done
#   boot set           replaying the trace on a fresh volume, fresh daemon
#   trigger latency    4 KiB reads at the start of 100 chunks outside the
#                      boot set: on a fresh volume (from the object store)
#                      and then on a second volume (from the transfer cache)
#   sharing            --volumes volumes each replay the boot set on a fresh
#                      daemon: bytes the object store sent, beside the boot
#                      set's stored bytes (without sharing: N times that)
#   hydration          one volume hydrated in the background with no client:
#                      stored bytes per second beside the 200 MB/s cap
#   boot set, later   the first boot's touches stored as the snapshot's
#                      prefetch order (ferry snapshot prefetch); a fresh
#                      volume on a fresh daemon replays the boot set while
#                      hydration (default settings) fetches that order first
#   client reads       5000 random 4 KiB reads of a hydrated volume, idle
#                      and while another volume of its pool hydrates
#   nbdkit             the same boot sets through one nbdkit per volume (curl
#                      plugin on the raw image, cow and cache filters)
#   resize2fs          growing ext4 4x on a fresh lazy volume through
#                      nbdfuse: default layout vs -E packed_meta_blocks=1
#   VM boot            (--vm; --vm-only for this alone) a real guest,
#                      qemu-system-x86_64 under TCG with Debian's cloud
#                      kernel and the image as its root on NVMe, timed to
#                      its FERRY-VM-BOOTED marker: after ferry cp, on a
#                      first lazy clone, on a later clone with a prefetch
#                      order, and --vms (10) guests at once from one daemon
#                      (see "VM boot to the marker" below)
set -euo pipefail
usage() { echo "usage: $0 BUILD_DIR [--image-mib N] [--data-mb N] [--volumes N] [--vm | --vm-only] [--vms N] [--vm-rounds N]" >&2; exit 2; }
[ $# -ge 1 ] || usage
BUILD=$(cd "$1" && pwd)
shift
IMAGE_MIB=2560 DATA_MB=1700 VOLUMES=50 VM= VMS=10 VM_ROUNDS=5
while [ $# -gt 0 ]; do
  case "$1" in
    --image-mib) IMAGE_MIB=${2:?}; shift 2 ;;
    --data-mb) DATA_MB=${2:?}; shift 2 ;;
    --volumes) VOLUMES=${2:?}; shift 2 ;;
    --vm) VM=yes; shift ;;
    --vm-only) VM=only; shift ;;
    --vms) VMS=${2:?}; shift 2 ;;
    --vm-rounds) VM_ROUNDS=${2:?}; shift 2 ;;
    *) usage ;;
  esac
done
cd "$(dirname "$0")/.."
FERRY="$BUILD/ferry"
for tool in /sbin/mke2fs /sbin/debugfs /sbin/resize2fs /usr/bin/qemu-io /usr/bin/nbdinfo /usr/bin/curl \
    /usr/bin/nbdkit /usr/bin/nbdfuse /usr/bin/fusermount3; do
  [ -x "$tool" ] || { echo "volume_bench: $tool is missing: run make setup" >&2; exit 77; }
done

. bench/bench_lib.sh
bench_begin volume-bench
bench_on_exit 'fusermount3 -u "$TMP/mnt"'
# Byte counts and offsets pass 2^31: awk (mawk) prints them only with %.0f
# (its %d stops at 2147483647, and print writes 3e+09).

# --- The image -------------------------------------------------------------------
log "building a ${IMAGE_MIB} MiB ext4 image holding $DATA_MB MB of pinned files and filler"
bench/volume_bench_image.sh "$TMP" "$IMAGE_MIB" "$DATA_MB" >"$TMP/image.txt" || die "building the image failed"
IMG="$TMP/os.img"
# The same files with ext4's metadata packed at the start of the disk (for
# the resize2fs experiment).
PACKED="$TMP/packed.img"
IMAGE_BYTES=$(stat -c %s "$IMG")
log "image: $(cat "$TMP/image.txt"), $(du -B1 "$IMG" | cut -f1) bytes allocated"

# --- The boot set: a trace of (offset, length) reads --------------------------------
BOOT_FILES=$(cat "$TMP/boot-files")  # paths in the image, links resolved
: >"$TMP/trace"
echo "0 1048576" >>"$TMP/trace"
BS=4096
for f in $BOOT_FILES; do
  /sbin/debugfs -R "imap $f" "$IMG" 2>/dev/null |
    awk -v bs=$BS '/located at block/ { gsub(",", "", $4); printf "%.0f %d\n", $4 * bs, bs }' >>"$TMP/trace"
  /sbin/debugfs -R "blocks $f" "$IMG" 2>/dev/null | tr ' ' '\n' | awk -v bs=$BS 'NF { printf "%.0f %d\n", $1 * bs, bs }' >>"$TMP/trace"
done
# Merge adjacent blocks into runs; qemu-io reads at most 32 MiB at once.
sort -n -u "$TMP/trace" | awk '{ if (NR > 1 && $1 == end) { end += $2 } else { if (NR > 1) printf "%.0f %.0f\n", start, end - start; start = $1; end = $1 + $2 } }
  END { printf "%.0f %.0f\n", start, end - start }' |
  awk '{ o = $1; n = $2; while (n > 33554432) { printf "%.0f 33554432\n", o; o += 33554432; n -= 33554432 } printf "%.0f %.0f\n", o, n }' >"$TMP/runs"
BOOT_BYTES=$(awk '{ s += $2 } END { printf "%.0f", s }' "$TMP/runs")
BOOT_CHUNKS=$(awk '{ for (c = int($1 / 1048576); c <= int(($1 + $2 - 1) / 1048576); c++) print c }' "$TMP/runs" | sort -u | wc -l)
awk '{ printf "-c \"read %.0f %.0f\" ", $1, $2 }' "$TMP/runs" >"$TMP/qemu-io-args"
log "boot set: $(echo "$BOOT_FILES" | wc -l) files, $(wc -l <"$TMP/runs") reads, $BOOT_BYTES bytes in $BOOT_CHUNKS chunks"

# --- The object store ------------------------------------------------------------------
# (--no-auth: nbdkit's curl plugin reads the raw image without signing;
# ferry signs its requests all the same.)
start_test_s3 --no-auth --retain-memory
stats() { admin GET /_admin/stats | /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin)['ops'].get('get', {}); print(d.get('requests', 0), d.get('bytes_out', 0))"; }
log "snapshot and raw image into the test server"
"$FERRY" snapshot create "$IMG" s3://bench/snaps/os --no-predict --json >"$TMP/snap.json"
"$FERRY" cp "$IMG" s3://bench/images/os.img >/dev/null
[ "$VM" = only ] || "$FERRY" snapshot create "$PACKED" s3://bench/snaps/packed --no-predict >/dev/null
# The VM section's own snapshot of the same image (its chunks are already
# stored), so its first clone finds no prefetch order.
# Three snapshots of the same image for the VM boots (the later ones store
# their chunks again for free): vm never gets a prefetch order (--no-predict:
# first clones as they were before orders were predicted), vmg keeps the
# order predicted from its file system (a never-booted image, as a user gets
# it by default), vmp gets the first clone's touches (later clones).
[ -z "$VM" ] || { "$FERRY" snapshot create "$IMG" s3://bench/snaps/vm --no-predict >/dev/null &&
  "$FERRY" snapshot create "$IMG" s3://bench/snaps/vmg --json >"$TMP/vmg.json" &&
  "$FERRY" snapshot create "$IMG" s3://bench/snaps/vmp >/dev/null; }
rm -f "$PACKED"
STORED=$(/usr/bin/python3 -c "import json; d=json.load(open('$TMP/snap.json')); print(d['uploaded_bytes'])")
admin POST /_admin/faults '{"latency_ms": 20, "bandwidth_total": 200000000}' >/dev/null
log "snapshot: $STORED bytes stored"

# --- Full download first -----------------------------------------------------------
log "full download of the image with ferry cp"
t0=$(now_ms)
/usr/bin/time -f '%U %S' -o "$TMP/cp.cpu" "$FERRY" cp s3://bench/images/os.img "$TMP/full.img" >/dev/null
T_FULL=$(( $(now_ms) - t0 ))
CP_CPU=$(awk '{ print $1 + $2 }' "$TMP/cp.cpu")
log "full download: $T_FULL ms"
rm -f "$TMP/full.img"

# --- The daemon ----------------------------------------------------------------------
DAEMON_PID=
# VOLUME_SERVE_ARGS: more `volume serve` flags for every daemon here (to
# compare settings, e.g. VOLUME_SERVE_ARGS="--prefetch-threads 0").
start_daemon() {  # fresh pools, fresh transfer cache
  [ -n "$DAEMON_PID" ] && { kill "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true; }
  rm -rf "$TMP/pool" "$TMP/ports"
  "$FERRY" volume serve --pool "$TMP/pool" --nbd 127.0.0.1:0 --api 127.0.0.1:0 --port-file "$TMP/ports" \
    --cache-size 4G --overcommit 4 ${VOLUME_SERVE_ARGS:-} "$@" >>"$TMP/daemon.log" 2>&1 &
  DAEMON_PID=$!
  PIDS+=($DAEMON_PID)
  for _ in $(seq 1 100); do [ -s "$TMP/ports" ] && break; sleep 0.1; done
  [ -s "$TMP/ports" ] || { cat "$TMP/daemon.log" >&2; die "volume daemon did not start"; }
  read -r NBD API <"$TMP/ports"
}
vol() { "$FERRY" volume "$@" --api "127.0.0.1:$API"; }
vol_field() { vol status "$1" --json | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"; }  # VOLUME FIELD
replay() { replay_uri "nbd://127.0.0.1:$NBD/$1"; }  # replay VOLUME
replay_uri() {  # replay_uri NBD-URI: the boot trace, one qemu-io
  eval "qemu-io -f raw $(cat "$TMP/qemu-io-args") '$1'" >"$TMP/replay.out" 2>&1 ||
    { tail -3 "$TMP/replay.out" >&2; die "boot trace replay on $1 failed"; }
  grep -q 'failed' "$TMP/replay.out" && die "a boot read failed on $1"
  true
}

# --- VM boot to the marker (--vm, --vm-only) -------------------------------------------
# A real guest: qemu-system-x86_64 under TCG (no KVM needed), Debian's cloud
# kernel from /boot, the image as its root on an emulated NVMe disk (the
# image's /init is testing/vm/init.sh: python3, FERRY-VM-BOOTED on the
# serial console, a file written, power-off). Timed until the marker:
# (i) ferry cp of the raw image, then a boot from that local file; (ii) a
# first lazy clone of a snapshot with no prefetch order, hydration held
# still (the boot's own triggers and readahead alone: its bytes are one
# boot set's); (iii) the same first clone with the daemon's defaults (what
# a user gets: background hydration from the image's start, paused while
# the guest reads); (iv) a later clone on a fresh daemon (empty transfer
# cache, default hydration) after `ferry snapshot prefetch` recorded the
# first clone's touches; (v) VMS guests at once from one fresh daemon
# (hydration held still), until the last marker. Every clone is on a fresh
# daemon (empty transfer cache). Bytes are what the object store sent (its
# admin stats) until then.
VM_KERNEL=
VM_PIDS=()
vm_start() {  # vm_start NAME DRIVE-OPTIONS: a guest in the background, its console in $TMP/NAME.serial
  rm -f "$TMP/$1.serial"
  timeout 300 qemu-system-x86_64 -nodefaults -no-user-config -accel tcg -m 512 -display none -monitor none \
    -serial "file:$TMP/$1.serial" -no-reboot -kernel "$VM_KERNEL" \
    -append "root=/dev/nvme0n1 rw rootwait rootfstype=ext4 console=ttyS0 init=/init panic=-1 no_timer_check" \
    -drive "$2,if=none,id=d0" -device nvme,serial=ferry,drive=d0 >>"$TMP/qemu.log" 2>&1 &
  VM_PIDS+=($!)
  PIDS+=($!)
}
vm_wait() {  # vm_wait T0_MS NAME...: prints the ms from T0 until every guest showed its marker
  local t0=$1 left=0 v
  shift
  for _ in $(seq 1 1800); do
    left=0
    for v in "$@"; do
      grep -q '^FERRY-VM-FAILED\|Kernel panic' "$TMP/$v.serial" 2>/dev/null && { tail -5 "$TMP/$v.serial" >&2; die "guest $v failed"; }
      grep -q '^FERRY-VM-BOOTED' "$TMP/$v.serial" 2>/dev/null || left=$((left + 1))
    done
    [ "$left" = 0 ] && break
    sleep 0.1
  done
  [ "$left" = 0 ] || { tail -5 "$TMP/$1.serial" >&2; die "$left guests showed no marker in 180 s"; }
  echo $(( $(now_ms) - t0 ))
}
vm_end() {  # the guests power off by themselves
  local p
  for p in "${VM_PIDS[@]}"; do wait "$p" || die "a guest's qemu ended with $?"; done
  VM_PIDS=()
}
sent_bytes() { local b; read -r _ b <<<"$(stats)"; echo "$b"; }
trigger_wait_ms() {  # the daemon's mean client wait per missing chunk, in ms
  curl -sf "http://127.0.0.1:$API/metrics" | awk '$1 == "ferry_volume_trigger_wait_seconds_sum" { s = $2 }
    $1 == "ferry_volume_trigger_wait_seconds_count" { n = $2 } END { printf "%.1f\n", (n > 0 ? s * 1000 / n : 0) }'
}
lazy_boot() {  # lazy_boot SNAPSHOT VOLUME...: creates the volumes, boots a guest on each; sets LAZY_MS LAZY_BYTES
  local t0 v snap=$1
  shift
  admin POST /_admin/reset >/dev/null
  t0=$(now_ms)
  for v in "$@"; do
    vol create "$v" --from "s3://bench/snaps/$snap" >/dev/null
    vm_start "$v" "driver=nbd,server.type=inet,server.host=127.0.0.1,server.port=$NBD,export=$v"
  done
  LAZY_MS=$(vm_wait "$t0" "$@")
  LAZY_BYTES=$(sent_bytes)
  LAZY_BG=0  # chunks background hydration fetched meanwhile (counted in LAZY_BYTES)
  for v in "$@"; do
    LAZY_BG=$((LAZY_BG + $(vol_field "$v" background)))
  done
  vm_end
}
# VM_ROUNDS rounds, each: a boot from the local copy, a first lazy clone
# (snapshot vm: no prefetch order) with hydration held still (its own
# triggers) and with the defaults, a later clone (snapshot vmp, whose
# prefetch order is the first round's first clone's touches; default
# hydration). Then VMS guests at once.
vm_boot_section() {
  VM_KERNEL=$(ls /boot/vmlinuz-*-cloud-amd64 2>/dev/null | sort -V | tail -1)
  if ! command -v qemu-system-x86_64 >/dev/null || [ -z "$VM_KERNEL" ]; then
    log "VM boot: skipped, no qemu-system-x86_64 or /boot/vmlinuz-*-cloud-amd64 (make setup)"
    return 0
  fi
  log "VM boot: ferry cp of the image"
  admin POST /_admin/reset >/dev/null
  local t0 r
  t0=$(now_ms)
  "$FERRY" cp s3://bench/images/os.img "$TMP/vm.img" >/dev/null
  VM_DL_MS=$(( $(now_ms) - t0 ))
  VM_DL_BYTES=$(sent_bytes)
  : >"$TMP/vm.local"; : >"$TMP/vm.first"; : >"$TMP/vm.firstd"; : >"$TMP/vm.predicted"; : >"$TMP/vm.later"
  for r in $(seq 1 "$VM_ROUNDS"); do
    t0=$(now_ms)
    vm_start local "file=$TMP/vm.img,format=raw"
    vm_wait "$t0" local >>"$TMP/vm.local"
    vm_end
    start_daemon --hydration-rate 1 --hydration-threads 1
    lazy_boot vm "vm1-$r"
    log "VM boot round $r: the first clone's background hydration fetched $LAZY_BG chunks"
    echo "$LAZY_MS $LAZY_BYTES $(vol_field "vm1-$r" triggers) $(trigger_wait_ms)" >>"$TMP/vm.first"
    if [ "$r" = 1 ]; then
      "$FERRY" snapshot prefetch s3://bench/snaps/vmp --from-volume "vm1-1" --api "127.0.0.1:$API" >/dev/null
    fi
    start_daemon
    lazy_boot vm "vmd-$r"
    echo "$LAZY_MS $LAZY_BYTES $(vol_field "vmd-$r" triggers) $LAZY_BG" >>"$TMP/vm.firstd"
    start_daemon
    lazy_boot vmg "vmg-$r"
    echo "$LAZY_MS $LAZY_BYTES $(vol_field "vmg-$r" triggers) $LAZY_BG" >>"$TMP/vm.predicted"
    start_daemon
    lazy_boot vmp "vm2-$r"
    echo "$LAZY_MS $LAZY_BYTES $(vol_field "vm2-$r" triggers)" >>"$TMP/vm.later"
    log "VM boot round $r/$VM_ROUNDS: local $(tail -1 "$TMP/vm.local") ms, first clone $(tail -1 "$TMP/vm.first"), with default hydration $(tail -1 "$TMP/vm.firstd"), predicted order $(tail -1 "$TMP/vm.predicted"), later clone $(tail -1 "$TMP/vm.later") (ms, bytes, triggers)"
  done
  rm -f "$TMP/vm.img"
  log "VM boot: $VMS guests at once from one daemon"
  start_daemon --hydration-rate 1 --hydration-threads 1
  lazy_boot vm $(seq -f 'vmn-%g' 1 "$VMS")
  VM_MANY_MS=$LAZY_MS VM_MANY_BYTES=$LAZY_BYTES
  log "VM boot: $VM_MANY_MS ms to the last marker, $VM_MANY_BYTES bytes ($LAZY_BG chunks of them background hydration)"
  VM_DONE=1
}
vm_table() {
  [ "${VM_DONE:-}" = 1 ] || return 0
  echo
  /usr/bin/python3 - "$TMP/vm.local" "$TMP/vm.first" "$TMP/vm.later" "$VM_DL_MS" "$VM_DL_BYTES" "$VMS" "$VM_MANY_MS" \
    "$VM_MANY_BYTES" "$(basename "$VM_KERNEL")" "$(nproc)" "$TMP/vm.firstd" "$TMP/vm.predicted" "$TMP/vmg.json" <<'PY'
import statistics, sys
col = lambda path, i: [float(l.split()[i]) for l in open(path) if l.strip()]
local, first, later = col(sys.argv[1], 0), col(sys.argv[2], 0), col(sys.argv[3], 0)
dl, dl_bytes, n, many, many_bytes, kernel, cores = float(sys.argv[4]), sys.argv[5], int(sys.argv[6]), float(sys.argv[7]), float(sys.argv[8]), sys.argv[9], sys.argv[10]
med = statistics.median
lm = med(local)
def span(v): return "%.2f s (%.2f-%.2f)" % (med(v) / 1000, min(v) / 1000, max(v) / 1000)
print("| VM boot to its marker (%s, TCG, root on NVMe), median of %d rounds (range) | time | bytes from the object store | ratio to the boot from a local copy |" % (kernel, len(local)))
print("|---|---|---|---|")
print("| ferry cp of the image first (%.2f s), then boot the local copy | %.2f s + %s | %s | %.2f× with the download |" % (dl / 1000, dl / 1000, span(local), dl_bytes, (dl + lm) / lm))
print("| boot from the local copy alone | %s | 0 | 1.00× |" % span(local))
ratios = lambda v: " ".join("%.2f" % (b / a) for a, b in zip(local, v))
print("| first lazy clone (no prefetch order; %d triggers, mean wait %.1f ms; hydration held) | %s | %.0f | %.2f× (rounds: %s) |" % (med(col(sys.argv[2], 2)), med(col(sys.argv[2], 3)), span(first), med(col(sys.argv[2], 1)), med(first) / lm, ratios(first)))
firstd = col(sys.argv[11], 0)
print("| first lazy clone with the daemon's defaults (no prefetch order; %d triggers; background hydration fetched %d chunks meanwhile) | %s | %.0f | %.2f× (rounds: %s) |" % (med(col(sys.argv[11], 2)), med(col(sys.argv[11], 3)), span(firstd), med(col(sys.argv[11], 1)), med(firstd) / lm, ratios(firstd)))
pred = col(sys.argv[12], 0)
import json
order = json.load(open(sys.argv[13]))
print("| never-booted clone, order predicted from the file system at snapshot time (%d chunks from %d files; default hydration; %d reads still waited on a fetch) | %s | %.0f | %.2f× (rounds: %s) |" % (order["prefetch"], order["predicted_files"], med(col(sys.argv[12], 2)), span(pred), med(col(sys.argv[12], 1)), med(pred) / lm, ratios(pred)))
print("| later clone, fresh daemon, prefetch order from the first clone (default hydration; %d reads still waited on a fetch) | %s | %.0f | %.2f× (rounds: %s) |" % (med(col(sys.argv[3], 2)), span(later), med(col(sys.argv[3], 1)), med(later) / lm, ratios(later)))
print("| %d guests at once from one daemon, to the last marker (hydration held) | %.2f s | %.0f (%.2f× one first clone's) | %.2f× |" % (n, many / 1000, many_bytes, many_bytes / med(col(sys.argv[2], 1)), many / lm))
print()
print("TCG guests are CPU-bound: %d guests on %s cores need about %.1f s of boot whatever their disk." % (n, cores, n * lm / 1000 / float(cores)))
PY
}
if [ "$VM" = only ]; then
  vm_boot_section
  echo "### Lazy volumes: a VM booting from one ($(date -u +%Y-%m-%d), $(nproc) cores)"
  echo
  echo "ext4 image of ${IMAGE_MIB} MiB (bench/volume_bench_image.sh: $(cat "$TMP/image.txt")), $STORED bytes stored as 1 MiB chunks; ferry-test-s3 with 20 ms per request and 200 MB/s in total."
  vm_table
  exit 0
fi

# Hydration runs slowly in the background here (1 MiB/s) so the boot set
# is the clients' own doing.
log "first clone: first read and boot set"
start_daemon --hydration-rate 1M --hydration-threads 1
t0=$(now_ms)
vol create boot --from s3://bench/snaps/os >/dev/null
qemu-io -f raw -c "read 1024 4096" "nbd://127.0.0.1:$NBD/boot" >/dev/null
T_FIRST=$(( $(now_ms) - t0 ))
t0=$(now_ms)
replay boot
T_BOOT=$(( $(now_ms) - t0 ))
log "first clone: first read $T_FIRST ms, boot set $T_BOOT ms"

# This boot's first touches become the snapshot's prefetch order (what
# `ferry snapshot prefetch` is for): later clones hydrate them first.
"$FERRY" snapshot prefetch s3://bench/snaps/os --from-volume boot --api "127.0.0.1:$API" >/dev/null

# Trigger latency: 100 chunks outside the boot set, cold then from the cache.
log "trigger latency: 100 chunks, cold then from the transfer cache"
awk '{ for (c = int($1 / 1048576); c <= int(($1 + $2 - 1) / 1048576); c++) print c }' "$TMP/runs" | sort -u >"$TMP/boot.chunks"
/usr/bin/python3 - "$TMP/snap.json" "$IMAGE_BYTES" "$TMP/boot.chunks" >"$TMP/probe.chunks" <<'PY'
import random, sys
n = (int(sys.argv[2]) + (1 << 20) - 1) >> 20
boot = {int(l) for l in open(sys.argv[3])}
r = random.Random(1)
print("\n".join(str(c) for c in r.sample([c for c in range(n) if c not in boot], 100)))
PY
probe() {  # probe VOLUME: per-read seconds of 4 KiB at each probe chunk
  # (qemu-io prints each command's rate with 4 digits: "... and N ops/sec")
  args=$(awk '{ printf "-c \"read %.0f 4096\" ", $1 * 1048576 }' "$TMP/probe.chunks")
  eval "qemu-io -f raw $args nbd://127.0.0.1:$NBD/$1" |
    awk '/ops\/sec\)/ { for (i = 1; i <= NF; i++) if ($i == "ops/sec)") printf "%.6f\n", 1 / $(i - 1) }'
}
vol create cold --from s3://bench/snaps/os >/dev/null
vol create warm --from s3://bench/snaps/os >/dev/null
probe cold >"$TMP/lat.cold"
probe warm >"$TMP/lat.warm"
pct() { sort -g "$1" | awk -v p="$2" '{ a[NR] = $1 } END { i = int(NR * p + 0.999999); if (i < 1) i = 1; printf "%.2f", a[i] * 1000 }'; }
latency_row() { echo "| $1 | $(pct "$2" 0.5) | $(pct "$2" 0.99) |"; }  # latency_row LABEL FILE

# A later clone of the snapshot, now with its prefetch order, on a fresh
# daemon (empty transfer cache) with default hydration settings; three
# rounds, each on a fresh daemon: the median and the spread.
log "a later clone with the prefetch order (3 rounds)"
: >"$TMP/later.first"
: >"$TMP/later.boot"
for round in 1 2 3; do
  start_daemon
  t0=$(now_ms)
  vol create "boot2-$round" --from s3://bench/snaps/os >/dev/null
  qemu-io -f raw -c "read 1024 4096" "nbd://127.0.0.1:$NBD/boot2-$round" >/dev/null
  echo $(( $(now_ms) - t0 )) >>"$TMP/later.first"
  replay "boot2-$round"
  echo $(( $(now_ms) - t0 )) >>"$TMP/later.boot"
done
median3() { sort -n "$1" | sed -n 2p; }
spread3() { sort -n "$1" | tr '\n' ' ' | sed 's/ $//'; }
T_FIRST2=$(median3 "$TMP/later.first")
T_BOOT2=$(median3 "$TMP/later.boot")
log "later clone: first read $T_FIRST2 ms, boot set $T_BOOT2 ms (medians; boot sets $(spread3 "$TMP/later.boot") ms)"

# Sharing: N volumes replay the boot set on a fresh daemon (empty transfer cache).
log "sharing: $VOLUMES volumes replay the boot set"
start_daemon --hydration-rate 1 --hydration-threads 1
admin POST /_admin/reset >/dev/null
vol create clone --from s3://bench/snaps/os --count "$VOLUMES" >/dev/null
for i in $(seq 0 $((VOLUMES - 1))); do
  replay "clone-$i"
  [ $(( (i + 1) % 10 )) != 0 ] || log "sharing: $((i + 1)) of $VOLUMES volumes done"
done
read -r SHARED_GETS SHARED_BYTES <<<"$(stats)"

# The peer for the same work: one nbdkit per volume (curl plugin reading the
# raw image with HTTP ranges, cow filter for the volume's writes, cache
# filter), each replaying the boot set.
log "nbdkit: $VOLUMES boot sets, one nbdkit each"
admin POST /_admin/reset >/dev/null
T_NBDKIT_BOOT=
for i in $(seq 0 $((VOLUMES - 1))); do
  sock="$TMP/nbdkit.sock"
  rm -f "$sock"
  t0=$(now_ms)
  nbdkit -f -U "$sock" --filter=cow --filter=cache curl url="$S3/bench/images/os.img" >>"$TMP/nbdkit.log" 2>&1 &
  KIT=$!
  PIDS+=($KIT)
  for _ in $(seq 1 100); do [ -S "$sock" ] && break; sleep 0.05; done
  replay_uri "nbd+unix:///?socket=$sock"
  [ -n "$T_NBDKIT_BOOT" ] || T_NBDKIT_BOOT=$(( $(now_ms) - t0 ))
  kill "$KIT"; wait "$KIT" 2>/dev/null || true
  [ $(( (i + 1) % 10 )) != 0 ] || log "nbdkit: $((i + 1)) of $VOLUMES done"
done
read -r KIT_GETS KIT_BYTES <<<"$(stats)"
BOOT_STORED=$(( BOOT_CHUNKS * 1048576 ))

# Hydration throughput: one volume, no clients, against the 200 MB/s cap.
log "hydration of one volume, no clients"
start_daemon --hydration-threads 32
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"; }  # user + system
C0=$(cpu_s "$DAEMON_PID")
t0=$(now_ms)
vol create hyd --from s3://bench/snaps/os >/dev/null
for n in $(seq 1 3000); do
  case "$(vol status hyd)" in *'"hydrated"'*) break ;; esac  # (a cheap poll: the CPU is shared)
  [ $((n % 100)) != 0 ] || log "hydration: still going"
  sleep 0.1
done
T_HYD=$(( $(now_ms) - t0 ))
HYD_CPU=$(awk -v a="$C0" -v b="$(cpu_s "$DAEMON_PID")" 'BEGIN { print b - a }')
log "hydration: $T_HYD ms, daemon CPU $HYD_CPU s"

# Client reads during hydration: 5000 random 4 KiB reads of the hydrated
# volume, idle, then while a second volume of its pool hydrates at full
# speed from the transfer cache (which now holds every chunk).
log "client reads: 5000 random 4 KiB reads, idle then beside a hydration"
/usr/bin/python3 - "$IMAGE_BYTES" >"$TMP/random.offsets" <<'PY'
import random, sys
r = random.Random(2)
print("\n".join(str(r.randrange(int(sys.argv[1]) // 4096) * 4096) for _ in range(5000)))
PY
probe_random() {  # per-read seconds of 4 KiB reads at the random offsets
  args=$(awk '{ printf "-c \"read %.0f 4096\" ", $1 }' "$TMP/random.offsets")
  eval "qemu-io -f raw $args nbd://127.0.0.1:$NBD/$1" |
    awk '/ops\/sec\)/ { for (i = 1; i <= NF; i++) if ($i == "ops/sec)") printf "%.6f\n", 1 / $(i - 1) }'
}
probe_random hyd >/dev/null  # the page cache warm, as for a running guest
probe_random hyd >"$TMP/lat.idle"
hyd2_fetched() { vol status hyd2 --json | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["background"] + d["triggers"])'; }
vol create hyd2 --from s3://bench/snaps/os >/dev/null
HYD2_BEFORE=$(hyd2_fetched)
probe_random hyd >"$TMP/lat.busy"
HYD2_DONE=$(( $(hyd2_fetched) - HYD2_BEFORE ))

# Tencent's file-system finding: resize2fs growing ext4 on a fresh lazy
# volume 4x its snapshot, through nbdfuse, default layout against
# packed_meta_blocks=1. Background hydration is held still, so every chunk
# fetched is resize2fs's own doing.
start_daemon --hydration-rate 1 --hydration-threads 1
mkdir -p "$TMP/mnt"
resize_on() {  # resize_on SNAPSHOT: prints "triggers origin_bytes ms"
  admin POST /_admin/reset >/dev/null
  vol create "grow-$1" --from "s3://bench/snaps/$1" --size "$((IMAGE_MIB * 4))M" >/dev/null
  nbdfuse "$TMP/mnt/disk" "nbd://127.0.0.1:$NBD/grow-$1" >>"$TMP/nbdfuse.log" 2>&1 &
  local fuse=$!
  PIDS+=($fuse)
  for _ in $(seq 1 100); do [ -f "$TMP/mnt/disk" ] && break; sleep 0.05; done
  local t0
  t0=$(now_ms)
  /sbin/resize2fs "$TMP/mnt/disk" >"$TMP/resize.log" 2>&1 || { cat "$TMP/resize.log" >&2; die "resize2fs on $1"; }
  local ms=$(( $(now_ms) - t0 ))
  fusermount3 -u "$TMP/mnt"
  wait "$fuse" 2>/dev/null || true
  local triggers
  triggers=$(vol_field "grow-$1" triggers)
  read -r _ bytes <<<"$(stats)"
  echo "$triggers $bytes $ms"
}
log "resize2fs 4x: default layout"
read -r RS_DEF_TRIG RS_DEF_BYTES RS_DEF_MS <<<"$(resize_on os)"
log "resize2fs 4x: packed_meta_blocks=1"
read -r RS_PACK_TRIG RS_PACK_BYTES RS_PACK_MS <<<"$(resize_on packed)"
[ "$VM" != yes ] || vm_boot_section
log "done; the tables follow"

# --- The tables --------------------------------------------------------------------------
echo "### Lazy volumes: ferry volume beside downloading the image first ($(date -u +%Y-%m-%d), $(nproc) cores)"
echo
echo "ext4 image of ${IMAGE_MIB} MiB (mke2fs -d, bench/volume_bench_image.sh: $(cat "$TMP/image.txt"), $DATA_MB MB of files), $STORED bytes stored as 1 MiB chunks; ferry-test-s3 with 20 ms per request and 200 MB/s in total. Boot set: $(echo "$BOOT_FILES" | wc -l) files (python3.11, bash, ls, cat, cp, grep, sed and their libraries) plus the first MiB, $BOOT_BYTES bytes in $BOOT_CHUNKS chunks."
echo
echo "| measure | ferry volume | download the image first | ratio |"
echo "|---|---|---|---|"
awk -v f="$T_FIRST" -v d="$T_FULL" 'BEGIN { printf "| until the first read is answered | %.2f s | %.2f s | %.1f%% |\n", f / 1000, d / 1000, 100 * f / d }'
awk -v b="$T_BOOT" -v f="$T_FIRST" -v d="$T_FULL" 'BEGIN { printf "| until the boot set is read (first clone: triggers only) | %.2f s | %.2f s | %.1f%% |\n", (f + b) / 1000, d / 1000, 100 * (f + b) / d }'
awk -v f="$T_FIRST2" -v d="$T_FULL" 'BEGIN { printf "| until the first read is answered (a later clone, median of 3) | %.2f s | %.2f s | %.1f%% |\n", f / 1000, d / 1000, 100 * f / d }'
awk -v b="$T_BOOT2" -v d="$T_FULL" -v all="$(spread3 "$TMP/later.boot")" 'BEGIN { n = split(all, r, " "); s = ""; for (i = 1; i <= n; i++) s = s sprintf("%s%.1f%%", i > 1 ? " " : "", 100 * r[i] / d); printf "| until the boot set is read (a later clone: the first one'"'"'s touches as the prefetch order; median of 3: %s) | %.2f s | %.2f s | %.1f%% |\n", s, b / 1000, d / 1000, 100 * b / d }'
echo
echo "| trigger latency (4 KiB read, chunk not yet in the volume) | p50 ms | p99 ms |"
echo "|---|---|---|"
latency_row "chunk from the object store" "$TMP/lat.cold"
latency_row "chunk in the transfer cache (another volume fetched it)" "$TMP/lat.warm"
echo
echo "| $VOLUMES volumes read the boot set | GETs | bytes from the object store | per boot set stored |"
echo "|---|---|---|---|"
awk -v s="$SHARED_BYTES" -v b="$BOOT_STORED" -v g="$SHARED_GETS" \
  'BEGIN { printf "| ferry volume, one daemon (shared transfer cache) | %.0f | %.0f | %.3f× |\n", g, s, s / b }'
awk -v s="$KIT_BYTES" -v b="$BOOT_STORED" -v g="$KIT_GETS" \
  'BEGIN { printf "| nbdkit curl + cow + cache, one per volume | %.0f | %.0f | %.3f× |\n", g, s, s / b }'
echo
awk -v k="$T_NBDKIT_BOOT" -v f="$T_FIRST" -v b="$T_BOOT" 'BEGIN { printf "One boot set, first clone: ferry volume %.2f s, nbdkit (curl, cow, cache) %.2f s.\n", (f + b) / 1000, k / 1000 }'
echo
awk -v t="$T_HYD" -v s="$STORED" -v c="$HYD_CPU" -v cp="$CP_CPU" -v img="$IMAGE_BYTES" 'BEGIN { printf "Background hydration of one volume, no clients: %.1f s for %.0f stored bytes, %.0f MB/s against the 200 MB/s cap (%.0f%%); daemon CPU %.2f s, %.2f ns per hydrated byte (ferry cp of the raw image: %.2f s, %.2f ns per byte).\n", t / 1000, s, s / t / 1000, s / t / 1000 / 200 * 100, c, c * 1e9 / s, cp, cp * 1e9 / img }'
echo
echo "| 5000 random 4 KiB reads of a hydrated volume | p50 ms | p99 ms |"
echo "|---|---|---|"
latency_row "idle pool" "$TMP/lat.idle"
latency_row "while another volume of the pool hydrates (QoS: it fetched $HYD2_DONE chunks meanwhile)" "$TMP/lat.busy"
echo
echo "| resize2fs growing ext4 to 4× on a fresh lazy volume (through nbdfuse) | triggers | bytes from the object store | time |"
echo "|---|---|---|---|"
resize_row() { awk -v l="$1" -v t="$2" -v b="$3" -v m="$4" 'BEGIN { printf "| %s | %.0f | %.0f | %.2f s |\n", l, t, b, m / 1000 }'; }
resize_row "default layout" "$RS_DEF_TRIG" "$RS_DEF_BYTES" "$RS_DEF_MS"
resize_row "mke2fs -E packed_meta_blocks=1" "$RS_PACK_TRIG" "$RS_PACK_BYTES" "$RS_PACK_MS"
vm_table
