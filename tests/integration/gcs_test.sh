#!/usr/bin/env bash
# gs:// locations: the S3 store on GCS's XML API, checked for its request
# shapes against ferry's test server started as a stand-in for
# storage.googleapis.com (GS_ENDPOINT_URL) that refuses any signature not
# scoped to region "auto" and logs every request (-v): cp both ways (one
# multipart), ls, and migrate in and out, bytes compared; every request
# path-style (/BUCKET/KEY); the credentials are GS_ACCESS_KEY_ID /
# GS_SECRET_ACCESS_KEY, never the AWS_* ones.
source "$(dirname "$0")/lib.sh"
start_test_s3 --region auto --signing-region auto -v
export GS_ACCESS_KEY_ID="$TEST_KEY" GS_SECRET_ACCESS_KEY="$TEST_SECRET" GS_ENDPOINT_URL="$S3_URL"
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY || true
STATE="$TMP/state"

printf 'small body' >"$TMP/small.txt"
make_file "$TMP/big.bin" $((11 << 20))
"$FERRY" cp "$TMP/small.txt" "gs://bkt/dir/a b+c%.txt" || fail "cp to gs failed"
"$FERRY" cp --multipart-threshold 5M --part-size 5M "$TMP/big.bin" gs://bkt/dir/big.bin ||
  fail "multipart cp to gs failed"
"$FERRY" cp "gs://bkt/dir/a b+c%.txt" "$TMP/small.back" || fail "cp from gs failed"
"$FERRY" cp gs://bkt/dir/big.bin "$TMP/big.back" || fail "cp of the big object from gs failed"
same_bytes "$TMP/small.txt" "$TMP/small.back"
same_bytes "$TMP/big.bin" "$TMP/big.back"
"$FERRY" ls --recursive gs://bkt/dir/ >"$TMP/ls" || fail "ls gs failed"
grep -qF "dir/a b+c%.txt" "$TMP/ls" && grep -qF "dir/big.bin" "$TMP/ls" || fail "ls: $(cat "$TMP/ls")"
[ "$(stat_of "$S3_URL" upload-part requests)" -ge 3 ] || fail "the big object was not sent in parts"

# migrate a tree in and out again.
make_objects "$TMP/tree" 40 4 3000
"$FERRY" migrate --state "$STATE" "$TMP/tree" gs://bkt/tree/ --json -q >"$TMP/in.json" ||
  fail "local -> gs failed"
"$FERRY" migrate --state "$STATE" gs://bkt/tree/ "$TMP/out/" --json -q >"$TMP/out.json" ||
  fail "gs -> local failed"
[ "$(json_field transferred <"$TMP/out.json")" = 40 ] || fail "gs -> local: $(tail -1 "$TMP/out.json")"
[ "$(tree_digest "$TMP/tree")" = "$(tree_digest "$TMP/out")" ] || fail "trees differ"

# The shapes: every request path-style under /bkt, none refused.
grep -E ' (GET|PUT|POST|HEAD|DELETE) ' "$TMP/test-s3.log" | grep -v ' /_admin/' >"$TMP/requests" ||
  fail "no request log"
[ "$(wc -l <"$TMP/requests")" -gt 50 ] || fail "only $(wc -l <"$TMP/requests") requests logged"
if grep -vE ' (GET|PUT|POST|HEAD|DELETE) /bkt([/?]|$| )' "$TMP/requests" | grep -q .; then
  fail "not path-style: $(grep -vE ' /bkt([/?]|$| )' "$TMP/requests" | head -2)"
fi
grep -E -- '-> 4[0-9][0-9] ' "$TMP/requests" && fail "requests refused (above)"
# ...and the server does refuse another region, so the above were signed
# for "auto": the same bucket through s3:// signs for us-east-1.
rc=0
env AWS_ACCESS_KEY_ID="$TEST_KEY" AWS_SECRET_ACCESS_KEY="$TEST_SECRET" AWS_ENDPOINT_URL="$S3_URL" \
  "$FERRY" ls s3://bkt 2>"$TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -qF "(400 AuthorizationHeaderMalformed)" "$TMP/err" ||
  fail "a us-east-1 signature was not refused: rc=$rc $(cat "$TMP/err")"

# Without the GS_* variables there are no credentials (AWS keys are not used).
rc=0
env -u GS_ACCESS_KEY_ID AWS_ACCESS_KEY_ID="$TEST_KEY" AWS_SECRET_ACCESS_KEY="$TEST_SECRET" \
  "$FERRY" ls gs://bkt 2>"$TMP/err" || rc=$?
[ "$rc" = 1 ] || fail "ls without GS credentials: exit $rc"
[ "$(wc -l <"$TMP/err")" = 1 ] && grep -qF "ferry: gs://bkt: no GCS credentials" "$TMP/err" ||
  fail "$(cat "$TMP/err")"
echo "gcs: ok"
