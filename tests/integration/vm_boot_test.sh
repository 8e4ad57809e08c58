#!/usr/bin/env bash
# A real VM boots from a lazy volume: qemu-system-x86_64 (TCG) runs Debian's
# cloud kernel with its root file system on an emulated NVMe disk whose
# backend is ferry volume serve over NBD, the volume made from a snapshot in
# ferry-test-s3 (5 ms added to every request) and hydrating at 64 KiB/s, so
# what the guest reads comes from triggers.
# - The root is testing/vm/make_rootfs.sh's ext4 image: its /init runs
#   python3, prints FERRY-VM-BOOTED on the serial console, writes
#   /ferry-guest-wrote, syncs, remounts read-only and powers off.
# - Asserted: the markers in order on the console, qemu ending by itself (a
#   power-off, no panic) within its timeout, triggers counted on the volume
#   while it is still hydrating, and afterwards, in a copy of the volume,
#   the file the guest wrote (absent from the image), python3.11 unchanged,
#   and a file system that e2fsck finds clean.
# - A second guest boots from a clone of the same image snapshotted with
#   the prefetch order predicted from its file system (the default): the
#   order is prefetched, and it triggers under a quarter of the fetches the
#   first guest did.
# - The daemon records the guest's NBD requests (--trace-dir): the trace
#   parses, holds the boot's reads and the guest's writes, and
#   ferry-nbd-replay plays it back on 4 fresh volumes of the same snapshot
#   at once, each read compared with the image where the replay has not
#   written, each acknowledged write read back. FERRY_RECORD_TRACE=PATH
#   keeps the trace there (testing/traces/vm_boot.trace was made so).
# Skips (77) only when qemu-system-x86_64 or a cloud kernel is not installed.
source "$(dirname "$0")/lib.sh"
command -v qemu-system-x86_64 >/dev/null ||
  skip "qemu-system-x86_64 not installed (make setup: qemu-system-x86)"
KERNEL=$(ls /boot/vmlinuz-*-cloud-amd64 2>/dev/null | sort -V | tail -1)
[ -n "$KERNEL" ] || skip "no /boot/vmlinuz-*-cloud-amd64 (make setup: linux-image-cloud-amd64)"
[ -r "$KERNEL" ] || fail "$KERNEL is not readable"
RELEASE=${KERNEL#/boot/vmlinuz-}
need nbdcopy
[ -x /sbin/debugfs ] && [ -x /sbin/e2fsck ] || fail "e2fsprogs not installed"

IMG="$TMP/root.img"
"$FERRY_SOURCE/testing/vm/make_rootfs.sh" "$IMG" 64 2>"$TMP/rootfs.log" || { cat "$TMP/rootfs.log" >&2; fail "make_rootfs.sh"; }
[ -z "$(/sbin/debugfs -R 'cat /ferry-guest-wrote' "$IMG" 2>/dev/null)" ] || fail "the image already holds the guest's file"

start_test_s3
use_endpoint
"$FERRY" snapshot create "$IMG" s3://bkt/snaps/root --chunk-size 64K --no-predict --json >"$TMP/snap.json"
# The same image with the order predicted from its file system (the default).
"$FERRY" snapshot create "$IMG" s3://bkt/snaps/rootp --chunk-size 64K --json >"$TMP/snapp.json"
[ "$(json_field prefetch <"$TMP/snapp.json")" -gt 0 ] || fail "no prefetch order predicted: $(cat "$TMP/snapp.json")"
admin POST /_admin/faults '{"latency_ms": 5}' >/dev/null
start_volume_daemon --pool "$TMP/pool" --hydration-rate 64K --hydration-threads 1 --trace-dir "$TMP/traces"
vol create vm --from s3://bkt/snaps/root >/dev/null

# The guest. -nodefaults: no network card (no user-mode network) and no
# other device but what is named here.
SERIAL="$TMP/serial.log"
t0=$(date +%s%N)
timeout 120 qemu-system-x86_64 -nodefaults -no-user-config -accel tcg -m 512 \
  -display none -monitor none -serial "file:$SERIAL" -no-reboot \
  -kernel "$KERNEL" -append "root=/dev/nvme0n1 rw rootwait rootfstype=ext4 console=ttyS0 init=/init panic=-1 no_timer_check" \
  -drive "driver=nbd,server.type=inet,server.host=127.0.0.1,server.port=$NBD,export=vm,if=none,id=d0" \
  -device nvme,serial=ferry,drive=d0 >"$TMP/qemu.log" 2>&1 &
QEMU=$!
PIDS+=($QEMU)
marker_ms=
while kill -0 "$QEMU" 2>/dev/null; do
  if [ -z "$marker_ms" ] && grep -q '^FERRY-VM-BOOTED' "$SERIAL" 2>/dev/null; then
    marker_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  fi
  sleep 0.1
done
rc=0; wait "$QEMU" || rc=$?
cp "$TMP/traces/vm.trace" "$TMP/boot.trace" 2>/dev/null || true  # the boot's requests alone (nbdcopy's come later)
total_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
console_tail() { echo "--- serial console (last 30 lines) ---" >&2; tail -30 "$SERIAL" >&2 || true; cat "$TMP/qemu.log" >&2; }
[ "$rc" = 0 ] || { console_tail; fail "qemu exited $rc (124: still running after 120 s)"; }
grep -q 'FERRY-VM-FAILED\|Kernel panic' "$SERIAL" && { console_tail; fail "the guest reported a failure"; }
markers=$(grep -o '^FERRY-VM-[A-Z]*' "$SERIAL" | tr '\n' ' ')
[ "$markers" = "FERRY-VM-PYTHON FERRY-VM-BOOTED FERRY-VM-WROTE " ] || { console_tail; fail "markers on the console: '$markers'"; }
grep -q '^FERRY-VM-PYTHON 3\.11\.[0-9]* 5050' "$SERIAL" || { console_tail; fail "python3's line"; }
grep -qx "FERRY-VM-WROTE $RELEASE" <(tr -d '\r' <"$SERIAL") || { console_tail; fail "the guest ran another kernel than $RELEASE"; }
grep -q 'reboot: Power down' "$SERIAL" || { console_tail; fail "qemu ended without the guest powering off"; }
[ -n "$marker_ms" ] || marker_ms=$total_ms

# Lazy: the guest's reads were triggers, and the volume is still hydrating.
vol status vm --json >"$TMP/status.json"
triggers=$(json_field triggers <"$TMP/status.json")
state=$(json_field state <"$TMP/status.json")
[ "$triggers" -gt 0 ] || fail "no triggers counted: $(cat "$TMP/status.json")"
[ "$state" = hydrating ] || fail "the volume is $state: the boot did not run on a lazy volume"

# What the guest wrote is in the volume, and the rest is intact.
nbdcopy "nbd://127.0.0.1:$NBD/vm" "$TMP/after.img"
/sbin/e2fsck -fn "$TMP/after.img" >"$TMP/fsck" 2>&1 || { cat "$TMP/fsck" >&2; fail "e2fsck of the volume after the boot"; }
wrote=$(/sbin/debugfs -R 'cat /ferry-guest-wrote' "$TMP/after.img" 2>/dev/null)
[ "$wrote" = "FERRY-VM-WROTE $RELEASE" ] || fail "/ferry-guest-wrote in the volume: '$wrote'"
/sbin/debugfs -R "dump /usr/bin/python3.11 $TMP/python" "$TMP/after.img" 2>/dev/null
cmp -s "$TMP/python" /usr/bin/python3.11 || fail "/usr/bin/python3.11 read back from the volume differs"

# The recorded boot, replayed by 4 guests on fresh volumes.
TRACE="$TMP/boot.trace"
[ -s "$TRACE" ] || fail "no trace recorded at $TRACE"
reads=$(grep -c ' R ' "$TRACE" || true)
writes=$(grep -c ' W ' "$TRACE" || true)
[ "$reads" -ge 100 ] && [ "$writes" -ge 1 ] || fail "the trace holds $reads reads and $writes writes"
[ -n "${FERRY_RECORD_TRACE:-}" ] && cp "$TRACE" "$FERRY_RECORD_TRACE"
vol create r --from s3://bkt/snaps/root --count 4 >/dev/null
"$FERRY_BUILD/ferry-nbd-replay" --trace "$TRACE" --nbd "127.0.0.1:$NBD" --export 'r-{i}' --guests 4 \
  --time-scale 0 --check-image "$IMG" --write-log "$TMP/writes.log" >"$TMP/replay.json" ||
  fail "the replay: $(cat "$TMP/replay.json")"
[ "$(json_field ok <"$TMP/replay.json")" = 4 ] || fail "replay: $(cat "$TMP/replay.json")"
[ "$(json_field reads_checked <"$TMP/replay.json")" -gt 0 ] || fail "no read compared: $(cat "$TMP/replay.json")"
"$FERRY_BUILD/ferry-nbd-replay" --verify-writes "$TMP/writes.log" --nbd "127.0.0.1:$NBD" --export 'r-{i}' \
  >"$TMP/verify.json" || fail "replayed writes: $(cat "$TMP/verify.json")"

# A never-booted image with its predicted order: a second guest boots from
# a clone of rootp while the daemon prefetches the order; its reads find
# what they need (far fewer triggers than the first boot's).
vol create vmp --from s3://bkt/snaps/rootp >/dev/null
SERIAL2="$TMP/serial2.log"
timeout 120 qemu-system-x86_64 -nodefaults -no-user-config -accel tcg -m 512 \
  -display none -monitor none -serial "file:$SERIAL2" -no-reboot \
  -kernel "$KERNEL" -append "root=/dev/nvme0n1 rw rootwait rootfstype=ext4 console=ttyS0 init=/init panic=-1 no_timer_check" \
  -drive "driver=nbd,server.type=inet,server.host=127.0.0.1,server.port=$NBD,export=vmp,if=none,id=d0" \
  -device nvme,serial=ferry,drive=d0 >"$TMP/qemu2.log" 2>&1 || { tail -20 "$SERIAL2" >&2; fail "the second guest: qemu failed"; }
markers=$(grep -o '^FERRY-VM-[A-Z]*' "$SERIAL2" | tr '\n' ' ')
[ "$markers" = "FERRY-VM-PYTHON FERRY-VM-BOOTED FERRY-VM-WROTE " ] || { tail -20 "$SERIAL2" >&2; fail "second guest's markers: '$markers'"; }
vol status vmp --json >"$TMP/statusp.json"
triggers_p=$(json_field triggers <"$TMP/statusp.json")
hinted_p=$(json_field hinted <"$TMP/statusp.json")
[ "$hinted_p" -gt 0 ] || fail "the predicted order was not prefetched: $(cat "$TMP/statusp.json")"
[ $((triggers_p * 4)) -lt "$triggers" ] ||
  fail "with the predicted order the guest still triggered $triggers_p fetches (without: $triggers)"

awk -v m="$marker_ms" -v t="$total_ms" -v g="$triggers" 'BEGIN {
  printf "guest booted from a lazy volume: marker at %.1f s, powered off at %.1f s, %d triggers\n", m / 1000, t / 1000, g }'
echo "predicted order: $(json_field prefetch <"$TMP/snapp.json") chunks; the second guest triggered $triggers_p fetches, $hinted_p chunks prefetched"
echo "trace: $reads reads, $writes writes; replayed: $(cat "$TMP/replay.json")"
echo "verified: $(cat "$TMP/verify.json")"
echo "vm_boot_test: ok"
