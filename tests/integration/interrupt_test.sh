#!/usr/bin/env bash
# Two ways a copy can end early, and neither may lose or mix bytes:
#  - the object is overwritten while a download is being resumed: ferry must
#    not splice the two versions (it fails, or returns one whole version);
#  - the user presses Ctrl-C (SIGINT) or sends SIGTERM: ferry exits 130 and
#    leaves no temp file and no multipart upload behind.
source "$(dirname "$0")/lib.sh"
start_test_s3
use_endpoint
faults() { admin POST /_admin/faults "$1" >/dev/null; }

# 1. Overwrite during a resumed download. v1 (8 MiB) is read at 4 MB/s and
# cut once half way; v2 (1 MiB) replaces it before the read resumes.
make_file "$TMP/v1.bin" $((8 << 20))
make_file "$TMP/v2.bin" $((1 << 20))
"$FERRY" cp "$TMP/v1.bin" s3://bkt/obj.bin
faults '{"kind":"truncate","op":"get","count":1,"bandwidth":4000000}'
mkdir -p "$TMP/dl"
rc=0
"$FERRY" cp --multipart-threshold 1G s3://bkt/obj.bin "$TMP/dl/obj.bin" 2>"$TMP/err" &
pid=$!
sleep 0.3
"$FERRY" cp "$TMP/v2.bin" s3://bkt/obj.bin  # done in ~0.3 s, before the cut at ~1 s
wait "$pid" || rc=$?
faults '{}'
if [ "$rc" -eq 0 ]; then
  cmp -s "$TMP/dl/obj.bin" "$TMP/v1.bin" || cmp -s "$TMP/dl/obj.bin" "$TMP/v2.bin" ||
    fail "download succeeded with bytes of neither version (spliced)"
  echo "ok: the download finished with one whole version"
else
  grep -q "precondition failed" "$TMP/err" || fail "unexpected error: $(cat "$TMP/err")"
  [ -z "$(ls -A "$TMP/dl")" ] || fail "failed download left: $(ls -A "$TMP/dl")"
  echo "ok: $(cat "$TMP/err")"
fi

# 2. SIGINT during a slow download: exit 130, no temp file.
make_file "$TMP/big.bin" $((16 << 20))
"$FERRY" cp "$TMP/big.bin" s3://bkt/big.bin
mkdir -p "$TMP/sig"
faults '{"bandwidth_total":2000000}'
"$FERRY" cp s3://bkt/big.bin "$TMP/sig/big.bin" 2>"$TMP/err" &
pid=$!
# Signal once the download is under way (its temp file exists): a
# background job starts with SIGINT ignored until ferry installs its
# handler, and a slow start (a sanitizer build on a loaded machine) took
# longer than a fixed second.
for _ in $(seq 1 200); do [ -n "$(ls -A "$TMP/sig")" ] && break; sleep 0.05; done
sleep 0.2
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
[ "$rc" -eq 130 ] || fail "SIGINT during download: exit $rc, want 130 ($(cat "$TMP/err"))"
[ -z "$(ls -A "$TMP/sig")" ] || fail "interrupted download left: $(ls -A "$TMP/sig")"
echo "ok: interrupted download exits 130 and leaves nothing"

# 3. SIGTERM during a multipart upload: exit 130, the upload is aborted.
"$FERRY" cp --multipart-threshold 5M --part-size 5M --concurrency 2 "$TMP/big.bin" \
  s3://bkt/up.bin 2>"$TMP/err" &
pid=$!
upload_open() { admin GET /_admin/stats | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['storage']['multipart_uploads'])"; }
for _ in $(seq 1 100); do [ "$(upload_open)" -ge 1 ] && break; sleep 0.1; done  # under way first
sleep 0.2
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
faults '{}'
[ "$rc" -eq 130 ] || fail "SIGTERM during upload: exit $rc, want 130 ($(cat "$TMP/err"))"
uploads=$(admin GET /_admin/stats | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['storage']['multipart_uploads'])")
[ "$uploads" -eq 0 ] || fail "interrupted upload left $uploads multipart uploads"
"$AWS" --endpoint-url "$S3_URL" s3api head-object --bucket bkt --key up.bin >/dev/null 2>&1 &&
  fail "an interrupted upload created the object"
echo "ok: interrupted upload exits 130 and aborts its multipart upload"
echo "interrupt: ok"
