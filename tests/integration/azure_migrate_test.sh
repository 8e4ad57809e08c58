#!/usr/bin/env bash
# ferry migrate S3 -> Azure -> local directory, with Azurite (npm) as the
# Azure peer and ferry's own test S3 server as the source: awkward keys
# (spaces, unicode, '+', '%'), user metadata and Content-Type, an object big
# enough for multipart (small parts); bytes compared at the end, metadata
# read back by an independent client (azure_blob.py) and by awscli after a
# trip back to S3. Then cp and ls on azure://, and the one-line errors for a
# wrong account key and a missing container.
source "$(dirname "$0")/lib.sh"
start_test_s3
use_endpoint
start_azurite
STATE="$TMP/state"
AZ=azure://devstoreaccount1
az_blob mkcontainer ctr || fail "cannot create the Azure container"

KEYS=("with space.txt" "plus+sign" "per%cent" "100%" "ünï/日本語/ключ" "a/b/c/deep.txt")
for k in "${KEYS[@]}"; do
  printf 'body of %s' "$k" >"$TMP/body"
  aws_s3 s3api put-object --bucket bkt --key "src/$k" --body "$TMP/body" --content-type text/plain \
    --metadata "origin=peer,owner-id=42" >/dev/null || fail "test server refused key '$k'"
done
make_file "$TMP/big.bin" $((3 << 20))
aws_s3 s3api put-object --bucket bkt --key src/big.bin --body "$TMP/big.bin" \
  --content-type application/x-big --metadata origin=peer >/dev/null
N=$((${#KEYS[@]} + 1))

summary_ok() {  # summary_ok RUN_JSON N: a completed run that moved N objects
  /usr/bin/python3 - "$1" "$2" <<'PY' || fail "summary: $(tail -1 "$1")"
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
n = int(sys.argv[2])
assert s["state"] == "completed" and s["listed"] == n and s["transferred"] == n, s
assert s["failed"] == 0 and s["skipped"] == 0, s
PY
}

# S3 -> Azure, the big object in 1 MiB blocks.
"$FERRY" migrate --state "$STATE" s3://bkt/src/ "$AZ/ctr/copy/" --json \
  --multipart-threshold 1M --part-size 1M >"$TMP/run1.json" 2>"$TMP/run1.err" ||
  fail "s3 -> azure failed: $(tail -2 "$TMP/run1.err")"
summary_ok "$TMP/run1.json" "$N"

# What Azure holds, seen by a client that is not ferry.
for k in "${KEYS[@]}"; do
  az_blob get ctr "copy/$k" "$TMP/got" || fail "azurite has no blob 'copy/$k'"
  [ "$(cat "$TMP/got")" = "body of $k" ] || fail "'copy/$k' has the wrong bytes on Azure"
  az_blob head ctr "copy/$k" >"$TMP/h.json"
  /usr/bin/python3 - "$TMP/h.json" <<'PY' || fail "'copy/$k' headers on Azure: $(cat "$TMP/h.json")"
import json, sys
h = json.load(open(sys.argv[1]))
assert h["content-type"] == "text/plain", h
assert h["x-ms-meta-origin"] == "peer", h
assert h["x-ms-meta-owner_x2d_id"] == "42", h  # '-' escaped: Azure names are C# identifiers
PY
done
az_blob get ctr copy/big.bin "$TMP/big.azure"
same_bytes "$TMP/big.bin" "$TMP/big.azure"
az_blob head ctr copy/big.bin >"$TMP/big.json"
grep -q '"content-type": "application/x-big"' "$TMP/big.json" || fail "big.bin lost its Content-Type"
grep -q '"x-ms-meta-origin": "peer"' "$TMP/big.json" || fail "big.bin lost its metadata"

# ferry ls: every key, in one listing.
"$FERRY" ls --recursive "$AZ/ctr/copy/" >"$TMP/ls" || fail "ls azure failed"
[ "$(wc -l <"$TMP/ls")" = "$N" ] || fail "ls shows $(wc -l <"$TMP/ls") objects, want $N: $(cat "$TMP/ls")"
grep -qF "copy/ünï/日本語/ключ" "$TMP/ls" || fail "ls lacks the unicode key"

# Azure -> local directory: the same bytes.
"$FERRY" migrate --state "$STATE" "$AZ/ctr/copy/" "$TMP/local/" --json \
  >"$TMP/run2.json" 2>"$TMP/run2.err" || fail "azure -> local failed: $(tail -2 "$TMP/run2.err")"
summary_ok "$TMP/run2.json" "$N"
for k in "${KEYS[@]}"; do
  f="$TMP/local/${k//%/%25}"  # the local store writes '%' as "%25" (key_path.h)
  [ "$(cat "$f")" = "body of $k" ] || fail "local '$k' has the wrong bytes"
done
same_bytes "$TMP/big.bin" "$TMP/local/big.bin"
# Again, with every local copy made to look older than its source: only
# content can say the small ones are unchanged, and Azure's listing gives
# their Content-MD5; the big one (multipart, no Content-MD5) is copied again.
find "$TMP/local" -type f -exec touch -d 2001-01-01 {} +
"$FERRY" migrate --state "$STATE" "$AZ/ctr/copy/" "$TMP/local/" --json \
  >"$TMP/run2b.json" 2>"$TMP/run2b.err" || fail "azure -> local again failed"
[ "$(json_field skipped <"$TMP/run2b.json")" = "${#KEYS[@]}" ] &&
  [ "$(json_field transferred <"$TMP/run2b.json")" = 1 ] || fail "rerun: $(tail -1 "$TMP/run2b.json")"
same_bytes "$TMP/big.bin" "$TMP/local/big.bin"

# Azure -> S3 again: awscli sees the metadata and Content-Type S3 started with.
"$FERRY" migrate --state "$STATE" "$AZ/ctr/copy/" s3://bkt/back/ --json \
  --multipart-threshold 1M --part-size 1M >"$TMP/run3.json" 2>"$TMP/run3.err" ||
  fail "azure -> s3 failed: $(tail -2 "$TMP/run3.err")"
summary_ok "$TMP/run3.json" "$N"
for k in "${KEYS[@]}" big.bin; do
  aws_s3 s3api head-object --bucket bkt --key "back/$k" >"$TMP/h.json" || fail "no back/$k"
  grep -q '"origin": "peer"' "$TMP/h.json" || fail "back/$k lost its metadata: $(cat "$TMP/h.json")"
done
grep -q '"owner-id": "42"' <(aws_s3 s3api head-object --bucket bkt --key "back/plus+sign") ||
  fail "owner-id did not survive the escape"
aws_s3 s3 cp --quiet s3://bkt/back/big.bin "$TMP/big.back"
same_bytes "$TMP/big.bin" "$TMP/big.back"

# cp both ways, and a server-side copy within the container.
printf 'cp body' >"$TMP/f.txt"
"$FERRY" cp "$TMP/f.txt" "$AZ/ctr/cp/f.txt" || fail "cp to azure failed"
"$FERRY" cp "$AZ/ctr/cp/f.txt" "$AZ/ctr/cp/g.txt" || fail "cp within azure failed"
"$FERRY" cp "$AZ/ctr/cp/g.txt" "$TMP/g.txt" || fail "cp from azure failed"
[ "$(cat "$TMP/g.txt")" = "cp body" ] || fail "cp round trip differs"

# Errors: one line, the cause named, exit 1, no key shown.
expect_error() {  # expect_error EXACT_LINE CMD...
  local want=$1; shift
  local rc=0
  "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
  [ "$rc" -eq 1 ] || fail "exit $rc, want 1: $*"
  [ "$(wc -l <"$TMP/err")" -eq 1 ] || { cat "$TMP/err" >&2; fail "not one line: $*"; }
  [ "$(cat "$TMP/err")" = "$want" ] || fail "stderr '$(cat "$TMP/err")', want '$want'"
  grep -qF -- "$AZ_DEV_KEY" "$TMP/err" && fail "key leaked in: $(cat "$TMP/err")"
  echo "ok: $want"
}
WRONG_KEY=$(printf 'not the key of this account' | base64 -w0)
# (Azure answers a wrong key with AuthenticationFailed, Azurite with this.)
expect_error "ferry: $AZ/ctr: not authorized (wrong account key or SAS?) (403 AuthorizationFailure)" \
  env AZURE_STORAGE_CONNECTION_STRING="AccountName=devstoreaccount1;AccountKey=$WRONG_KEY;BlobEndpoint=$AZ_URL" \
  "$FERRY" ls "$AZ/ctr"
expect_error "ferry: $AZ/nosuch: no such container (404 ContainerNotFound)" "$FERRY" ls "$AZ/nosuch"
mkdir -p "$TMP/empty"
expect_error "ferry: $AZ/nosuch/p/: no such container (404 ContainerNotFound)" \
  "$FERRY" migrate --state "$STATE" "$TMP/empty" "$AZ/nosuch/p/"
expect_error "ferry: $AZ/ctr/none.txt: no such blob (404 BlobNotFound)" "$FERRY" cp "$AZ/ctr/none.txt" "$TMP/none"
expect_error "ferry: azure://someone/ctr: the credentials (AZURE_STORAGE_CONNECTION_STRING) are for account devstoreaccount1, not someone" \
  "$FERRY" ls azure://someone/ctr
echo "azure migrate: ok"
