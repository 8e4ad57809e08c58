#!/usr/bin/env bash
# A snapshot of a running volume (how a golden image is updated): an ext4
# image is snapshotted, served as a volume that hydrates slowly, and files
# are written into it through nbdfuse with debugfs -w; then
# `ferry snapshot create --from-volume` makes a new snapshot of it while it
# serves, and a clone of that snapshot is checked:
# - the clone holds the files written into the first volume, and checks
#   clean with e2fsck;
# - only changed chunks were uploaded: the stats and the test server's PUT
#   count equal the chunks whose content differs from the base image (and
#   is new to the repository), found by comparing the clone with the image;
# - copy-on-write: a snapshot is asked for through the API, and right after
#   its 202 (the instant is frozen) the file is overwritten while the upload
#   is slowed down: the snapshot holds the old bytes, the volume the new;
# - errors (unknown volume, a taken or bad name, another repository) are
#   one line each and the volume keeps serving.
source "$(dirname "$0")/lib.sh"
need nbdfuse
need fusermount3
need nbdcopy
[ -x /sbin/mke2fs ] && [ -x /sbin/debugfs ] && [ -x /sbin/e2fsck ] || skip "e2fsprogs not installed"
[ -c /dev/fuse ] && [ -w /dev/fuse ] || skip "no usable /dev/fuse"

MNT="$TMP/mnt"
mkdir -p "$MNT"
trap 'fusermount3 -u "$MNT" 2>/dev/null || true; cleanup' EXIT
CHUNK=65536

# The base image: a small ext4 file system with binaries and text.
mkdir -p "$TMP/root/bin" "$TMP/root/doc"
cp /usr/bin/bash /usr/bin/ls "$TMP/root/bin/"
cp -r "$FERRY_SOURCE/docs" "$TMP/root/doc/"
/sbin/mke2fs -q -t ext4 -d "$TMP/root" "$TMP/fs.img" 64M >"$TMP/mke2fs.log" 2>&1 || { cat "$TMP/mke2fs.log" >&2; fail "mke2fs"; }
start_test_s3
use_endpoint
"$FERRY" snapshot create "$TMP/fs.img" s3://bkt/snaps/base --chunk-size 64K >/dev/null

# Hydration crawls: most of the volume is never fetched, and its snapshot
# does not need it to be.
start_volume_daemon --pool "$TMP/pool" --hydration-rate 64K --hydration-threads 1
vol create guest --from s3://bkt/snaps/base >/dev/null
mount_volume() {  # mount_volume NAME: nbdfuse of the export at $MNT/disk
  nbdfuse "$MNT/disk" "nbd://127.0.0.1:$NBD/$1" &
  FUSE_PID=$!
  for _ in $(seq 1 100); do [ -f "$MNT/disk" ] && break; sleep 0.1; done
  [ -f "$MNT/disk" ] || fail "nbdfuse did not mount $1"
}
unmount_volume() { fusermount3 -u "$MNT"; wait "$FUSE_PID" 2>/dev/null || true; }
mount_volume guest

# Files written into the volume as a guest would.
head -c 1000000 /dev/urandom >"$TMP/new1"
echo "golden image, second edition" >"$TMP/motd"
/sbin/debugfs -w -R "write $TMP/new1 /new" "$MNT/disk" >/dev/null 2>&1
/sbin/debugfs -w -R "write $TMP/motd /motd" "$MNT/disk" >/dev/null 2>&1
sync "$MNT/disk"

# The snapshot of the running volume: what was uploaded, as the server saw it.
admin POST /_admin/reset >/dev/null
t0=$(date +%s.%N)
"$FERRY" snapshot create --from-volume guest s3://bkt/snaps/v2 --api "127.0.0.1:$API" --json >"$TMP/v2.json" ||
  fail "snapshot create --from-volume"
t1=$(date +%s.%N)
v2() { json_field "$1" <"$TMP/v2.json"; }
puts=$(stat_of "$S3_URL" put requests)
bytes_in=$(stat_of "$S3_URL" put bytes_in)
[ "$(v2 state)" = done ] || fail "snapshot state $(v2 state)"
[ "$puts" = $(($(v2 uploaded_chunks) + 1)) ] || fail "$puts PUTs for $(v2 uploaded_chunks) chunks and a manifest"
[ "$bytes_in" -ge "$(v2 uploaded_bytes)" ] && [ "$bytes_in" -lt $(($(v2 uploaded_bytes) + 100000)) ] ||
  fail "$bytes_in bytes PUT for $(v2 uploaded_bytes) chunk bytes and a manifest"
[ "$(vol status guest --json | json_field state)" = hydrating ] || fail "the volume finished hydrating: the test proves less"

# A clone of the new snapshot holds the files, and what changed is what
# was uploaded: chunks that differ from the base image, new to the repository.
vol create clone --from s3://bkt/snaps/v2 >/dev/null
nbdcopy "nbd://127.0.0.1:$NBD/clone" "$TMP/clone.img"
/sbin/e2fsck -fn "$TMP/clone.img" >"$TMP/fsck" 2>&1 || { cat "$TMP/fsck" >&2; fail "e2fsck of the clone"; }
for f in new1:new motd:motd; do
  /sbin/debugfs -R "dump /${f#*:} $TMP/out" "$TMP/clone.img" 2>/dev/null
  cmp -s "$TMP/out" "$TMP/${f%%:*}" || fail "/${f#*:} is not in the clone"
done
/sbin/debugfs -R "dump /bin/bash $TMP/out" "$TMP/clone.img" 2>/dev/null
cmp -s "$TMP/out" "$TMP/root/bin/bash" || fail "/bin/bash changed in the clone"
read -r changed want_chunks want_bytes < <(/usr/bin/python3 - "$TMP/fs.img" "$TMP/clone.img" $CHUNK <<'PY'
import hashlib, sys
base, new, c = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read(), int(sys.argv[3])
chunks = lambda d: [d[i:i + c] for i in range(0, len(d), c)]
known = {hashlib.sha256(b).hexdigest() for b in chunks(base) if any(b)}
changed = [n for b, n in zip(chunks(base), chunks(new)) if b != n]
fresh = {hashlib.sha256(n).digest(): len(n) for n in changed if any(n) and hashlib.sha256(n).hexdigest() not in known}
print(len(changed), len(fresh), sum(fresh.values()))
PY
)
[ "$(v2 uploaded_chunks)" = "$want_chunks" ] || fail "uploaded $(v2 uploaded_chunks) chunks, $want_chunks changed"
[ "$(v2 uploaded_bytes)" = "$want_bytes" ] || fail "uploaded $(v2 uploaded_bytes) bytes, $want_bytes changed"
written=$(v2 written_chunks)
[ "$written" -ge "$changed" ] && [ "$written" -le $((changed + 8)) ] || fail "$written chunks written, $changed changed"
[ "$(v2 chunks)" = $((64 * 1024 * 1024 / CHUNK)) ] || fail "$(v2 chunks) chunks"
echo "snapshot of a running volume: $written of $(v2 chunks) chunks written, $changed changed," \
  "$(v2 uploaded_chunks) uploaded ($(v2 uploaded_bytes) bytes, $puts PUTs) in $(awk "BEGIN {printf \"%.2f\", $t1 - $t0}") s"

# Copy-on-write: the instant is frozen when the API answers 202; the file
# is overwritten right after, while every request to the store is slowed
# (each chunk of the upload waits 0.5 s for its HEAD, 8 at a time).
BS=$(/sbin/dumpe2fs -h "$TMP/fs.img" 2>/dev/null | awk -F: '/^Block size/ {print $2 + 0}')
mapfile -t blocks < <(/sbin/debugfs -R "blocks /new" "$MNT/disk" 2>/dev/null | tr ' ' '\n' | grep -v '^$')
[ "${#blocks[@]}" -ge $((1000000 / BS)) ] || fail "/new has ${#blocks[@]} blocks of $BS bytes"
head -c 1000000 /dev/urandom >"$TMP/new2"
admin POST /_admin/faults '{"latency_ms": 500}' >/dev/null
code=$(curl -s -o "$TMP/post.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
  --data '{"to": "s3://bkt/snaps/v3"}' "http://127.0.0.1:$API/volumes/guest/snapshots")
[ "$code" = 202 ] || fail "POST /volumes/guest/snapshots: $code $(cat "$TMP/post.json")"
/usr/bin/python3 - "$MNT/disk" "$TMP/new2" "$BS" "${blocks[@]}" <<'PY'
import os, sys
fd, data, bs = os.open(sys.argv[1], os.O_WRONLY), open(sys.argv[2], "rb").read(), int(sys.argv[3])
# The file's end first: its chunks are the last the upload takes.
for k, b in reversed(list(enumerate(sys.argv[4:]))):
    part = data[k * bs:(k + 1) * bs]
    if part:
        os.pwrite(fd, part, int(b) * bs)
os.fsync(fd)
PY
for _ in $(seq 1 300); do
  curl -sf "http://127.0.0.1:$API/volumes/guest/snapshots/v3" >"$TMP/v3.json"
  [ "$(json_field state <"$TMP/v3.json")" != uploading ] && break
  sleep 0.1
done
admin POST /_admin/faults '{}' >/dev/null
[ "$(json_field state <"$TMP/v3.json")" = done ] || fail "snapshot v3: $(cat "$TMP/v3.json")"
spooled=$(json_field spooled_chunks <"$TMP/v3.json")
[ "$spooled" -ge 1 ] || fail "no chunk was copied aside: the overwrite came after the upload ($(cat "$TMP/v3.json"))"
/sbin/debugfs -R "dump /new $TMP/out" "$MNT/disk" 2>/dev/null
cmp -s "$TMP/out" "$TMP/new2" || fail "the volume does not hold the overwrite"
unmount_volume
vol create clone3 --from s3://bkt/snaps/v3 >/dev/null
nbdcopy "nbd://127.0.0.1:$NBD/clone3" "$TMP/clone3.img"
/sbin/debugfs -R "dump /new $TMP/out" "$TMP/clone3.img" 2>/dev/null
cmp -s "$TMP/out" "$TMP/new1" || fail "snapshot v3 does not hold /new as it was at its instant"
echo "copy-on-write: $spooled chunks copied aside while the upload ran; the snapshot has the old file"

# Errors: one line each; nothing made; the volume keeps serving.
expect_error() {  # expect_error PATTERN ARGS...: the CLI fails with one line matching PATTERN
  local pattern=$1
  shift
  if "$FERRY" snapshot create "$@" --api "127.0.0.1:$API" >"$TMP/out" 2>"$TMP/err"; then fail "$* succeeded"; fi
  [ "$(wc -l <"$TMP/err")" = 1 ] || fail "$*: not one line: $(cat "$TMP/err")"
  grep -q "$pattern" "$TMP/err" || fail "$*: $(cat "$TMP/err")"
}
expect_error "no volume 'nope'" --from-volume nope s3://bkt/snaps/v4
expect_error "already exists" --from-volume guest s3://bkt/snaps/v2
expect_error "expected REPOSITORY/NAME" --from-volume guest "s3://bkt/snaps/bad name"
expect_error "its snapshots go to s3://bkt/snaps/" --from-volume guest s3://bkt/elsewhere/v4
aws_s3 s3api head-object --bucket bkt --key snaps/snapshots/v4 >/dev/null 2>&1 && fail "a manifest v4 was made"
nbdcopy "nbd://127.0.0.1:$NBD/guest" "$TMP/guest.img"
/sbin/debugfs -R "dump /new $TMP/out" "$TMP/guest.img" 2>/dev/null
cmp -s "$TMP/out" "$TMP/new2" || fail "the volume changed after the failed requests"
echo "volume_snapshot_test: ok"
