#!/usr/bin/env bash
# A lazy volume holding an ext4 file system, mounted as a file with nbdfuse
# (libnbd's FUSE client) while the volume is still hydrating, and used
# through that file by e2fsprogs as a guest would use its disk:
# - debugfs reads files out of it (each read triggers the chunks it needs)
#   and they equal the originals; e2fsck -fn finds the file system clean;
# - debugfs -w writes a new file through nbdfuse; after unmounting, a copy
#   of the volume (nbdcopy) holds that file and still checks clean;
# - the volume was still hydrating throughout: its chunks came from triggers.
source "$(dirname "$0")/lib.sh"
need nbdfuse
need fusermount3
need nbdcopy
need qemu-img
[ -x /sbin/mke2fs ] && [ -x /sbin/debugfs ] && [ -x /sbin/e2fsck ] || skip "e2fsprogs not installed"
[ -c /dev/fuse ] && [ -w /dev/fuse ] || skip "no usable /dev/fuse"

MNT="$TMP/mnt"
mkdir -p "$MNT"
trap 'fusermount3 -u "$MNT" 2>/dev/null || true; cleanup' EXIT

# The image: a small ext4 file system with real binaries and text in it.
mkdir -p "$TMP/root/bin" "$TMP/root/doc"
cp /usr/bin/bash /usr/bin/ls "$TMP/root/bin/"
cp "$(readlink -f /usr/bin/python3)" "$TMP/root/bin/python3"
cp -r "$FERRY_SOURCE/docs" "$TMP/root/doc/"
/sbin/mke2fs -q -t ext4 -d "$TMP/root" "$TMP/fs.img" 64M >"$TMP/mke2fs.log" 2>&1 || { cat "$TMP/mke2fs.log" >&2; fail "mke2fs"; }
start_test_s3
use_endpoint
# No prefetch order (--no-predict): what the client reads comes from its own triggers.
"$FERRY" snapshot create "$TMP/fs.img" s3://bkt/snaps/fs --chunk-size 64K --no-predict >/dev/null
admin POST /_admin/faults '{"latency_ms": 5}' >/dev/null

# Hydration crawls (64 KiB/s), so what the client reads comes from triggers.
start_volume_daemon --pool "$TMP/pool" --hydration-rate 64K --hydration-threads 1
vol create guest --from s3://bkt/snaps/fs >/dev/null

nbdfuse "$MNT/disk" "nbd://127.0.0.1:$NBD/guest" &
FUSE_PID=$!
for _ in $(seq 1 100); do [ -f "$MNT/disk" ] && break; sleep 0.1; done
[ -f "$MNT/disk" ] || fail "nbdfuse did not mount the volume"
[ "$(stat -c %s "$MNT/disk")" = "$(stat -c %s "$TMP/fs.img")" ] || fail "the mounted volume has the wrong size"

# Files read through the mount equal the originals.
for f in bin/bash bin/ls bin/python3 doc/docs/ARCHITECTURE.md; do
  /sbin/debugfs -R "dump /$f $TMP/out" "$MNT/disk" 2>/dev/null
  cmp -s "$TMP/out" "$TMP/root/$f" || fail "/$f read through nbdfuse differs"
done
/sbin/e2fsck -fn "$MNT/disk" >"$TMP/fsck1" 2>&1 || { cat "$TMP/fsck1" >&2; fail "e2fsck through nbdfuse"; }
state=$(vol status guest --json | json_field state)
triggers=$(vol status guest --json | json_field triggers)
[ "$state" = hydrating ] || fail "the volume finished hydrating early ($state): reads were not lazy"
[ "$triggers" -gt 10 ] || fail "only $triggers triggers for the files read"

# A file written through the mount lands in the volume.
head -c 300000 /dev/urandom >"$TMP/new"
/sbin/debugfs -w -R "write $TMP/new /new" "$MNT/disk" >/dev/null 2>&1
sync "$MNT/disk"
fusermount3 -u "$MNT"
wait "$FUSE_PID" 2>/dev/null || true
nbdcopy "nbd://127.0.0.1:$NBD/guest" "$TMP/copy.img"
/sbin/e2fsck -fn "$TMP/copy.img" >"$TMP/fsck2" 2>&1 || { cat "$TMP/fsck2" >&2; fail "e2fsck of the volume after the write"; }
/sbin/debugfs -R "dump /new $TMP/new.out" "$TMP/copy.img" 2>/dev/null
cmp -s "$TMP/new" "$TMP/new.out" || fail "the file written through nbdfuse is not in the volume"
/sbin/debugfs -R "dump /bin/bash $TMP/out" "$TMP/copy.img" 2>/dev/null
cmp -s "$TMP/out" "$TMP/root/bin/bash" || fail "/bin/bash changed"
echo "nbdfuse: files read and written on a hydrating volume ($triggers triggers)"
echo "volume_fuse_test: ok"
