#!/usr/bin/env bash
# ferry snapshot create / ls / info against ferry-test-s3 (counting every
# request) and a local directory:
# - a raw image becomes a manifest plus one object per distinct non-zero
#   chunk: the server sees exactly that many PUTs; zero chunks are not stored;
# - a second snapshot of a slightly changed image uploads only the changed
#   chunk (content addressing shares the rest);
# - the chunks, put back together in manifest order (zeros for empty
#   entries), are the image (md5), and each chunk hashes to its name;
# - a damaged manifest is refused with one line (info) and does not hide
#   the others (ls); an existing name, a bad name, a bad chunk size and a
#   missing image are one-line errors that change nothing.
source "$(dirname "$0")/lib.sh"

start_test_s3
use_endpoint
IMG="$TMP/disk.img"
# 12 chunks of 64 KiB: 0-2 random, 3-5 zero, 6 = copy of 0, 7-11 random.
make_file "$TMP/rand" $((9 * 65536))
{
  head -c $((3 * 65536)) "$TMP/rand"
  head -c $((3 * 65536)) /dev/zero
  head -c 65536 "$TMP/rand"
  tail -c $((5 * 65536)) "$TMP/rand"
} >"$IMG"
[ "$(stat -c %s "$IMG")" = $((12 * 65536)) ] || fail "test image size"

admin POST /_admin/reset >/dev/null
out=$("$FERRY" snapshot create "$IMG" s3://bkt/repo/base --chunk-size 64K --json)
puts=$(admin GET /_admin/stats | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['ops']['put']['requests'])")
echo "$out"
[ "$(echo "$out" | json_field zero_chunks)" = 3 ] || fail "zero chunks: $out"
[ "$(echo "$out" | json_field uploaded_chunks)" = 8 ] || fail "uploaded chunks: $out"
[ "$(echo "$out" | json_field present_chunks)" = 1 ] || fail "a repeated chunk was not shared: $out"
[ "$puts" = 9 ] || fail "server saw $puts PUTs, want 8 chunks + 1 manifest"

# A changed chunk: only it is new.
cp "$IMG" "$TMP/disk2.img"
printf 'changed' | dd of="$TMP/disk2.img" bs=1 seek=$((8 * 65536 + 10)) conv=notrunc status=none
admin POST /_admin/reset >/dev/null
out=$("$FERRY" snapshot create "$TMP/disk2.img" s3://bkt/repo/next --chunk-size 64K --json)
[ "$(echo "$out" | json_field uploaded_chunks)" = 1 ] || fail "second snapshot: $out"
puts=$(admin GET /_admin/stats | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['ops']['put']['requests'])")
[ "$puts" = 2 ] || fail "second snapshot: $puts PUTs, want 1 chunk + 1 manifest"

"$FERRY" snapshot ls s3://bkt/repo >"$TMP/ls"
[ "$(awk '{print $1}' "$TMP/ls" | xargs)" = "base next" ] || fail "ls: $(cat "$TMP/ls")"
"$FERRY" snapshot info s3://bkt/repo/base --json >"$TMP/info"
[ "$(json_field chunks <"$TMP/info")" = 12 ] && [ "$(json_field image_size <"$TMP/info")" = $((12 * 65536)) ] ||
  fail "info: $(cat "$TMP/info")"

# The chunks make the image again (local repository, read directly).
"$FERRY" snapshot create "$IMG" "$TMP/repo/base" --chunk-size 64K >/dev/null
/usr/bin/python3 - "$TMP/repo" base "$IMG" <<'PY' || fail "chunks do not rebuild the image"
import hashlib, json, sys
repo, name, image = sys.argv[1:]
m = json.load(open(f"{repo}/snapshots/{name}"))
out = bytearray()
for i, h in enumerate(m["chunks"]):
    n = min(m["chunk_size"], m["image_size"] - i * m["chunk_size"])
    if not h:
        out += bytes(n)
        continue
    data = open(f"{repo}/chunks/{h[:2]}/{h}", "rb").read()
    assert hashlib.sha256(data).hexdigest() == h, f"chunk {i} does not hash to its name"
    assert len(data) == n, f"chunk {i} has {len(data)} bytes"
    out += data
assert hashlib.md5(out).hexdigest() == hashlib.md5(open(image, "rb").read()).hexdigest()
PY

# A damaged manifest.
aws_s3 s3 cp "$TMP/info" s3://bkt/repo/snapshots/broken >/dev/null
rc=0; "$FERRY" snapshot info s3://bkt/repo/broken 2>"$TMP/err" || rc=$?
[ $rc != 0 ] && [ "$(wc -l <"$TMP/err")" = 1 ] && grep -q 'snapshot manifest' "$TMP/err" || fail "broken manifest: $(cat "$TMP/err")"
"$FERRY" snapshot ls s3://bkt/repo >"$TMP/ls" 2>"$TMP/err"
[ "$(awk '{print $1}' "$TMP/ls" | xargs)" = "base next" ] && grep -q broken "$TMP/err" || fail "ls with a broken manifest"

# Bad input: one line, nothing changes.
before=$(aws_s3 s3 ls --recursive s3://bkt/repo | wc -l)
for args in "$IMG s3://bkt/repo/base" "$IMG s3://bkt/repo/.hidden" "$IMG s3://bkt/repo/a%b" \
            "$IMG s3://bkt/repo/x --chunk-size 3000" "$TMP/missing.img s3://bkt/repo/y"; do
  rc=0
  # shellcheck disable=SC2086
  "$FERRY" snapshot create $args >"$TMP/out" 2>"$TMP/err" || rc=$?
  [ $rc != 0 ] && [ "$(wc -l <"$TMP/err")" = 1 ] || fail "snapshot create $args: exit $rc, $(cat "$TMP/err")"
done
[ "$(aws_s3 s3 ls --recursive s3://bkt/repo | wc -l)" = "$before" ] || fail "bad input changed the repository"
rc=0; "$FERRY" snapshot info s3://bkt/repo/absent 2>"$TMP/err" || rc=$?
[ $rc != 0 ] && grep -q "no snapshot 'absent'" "$TMP/err" || fail "info of a missing snapshot"
echo "snapshot_test: ok"
