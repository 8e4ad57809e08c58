#!/usr/bin/env bash
# ferry cp against a real S3 peer, read back by Debian's awscli and the
# reverse: same bytes and same metadata both ways, single and multipart.
# Usage: cp_interop_test.sh test-s3|s3rver
source "$(dirname "$0")/lib.sh"
[ -x /usr/bin/aws ] || skip "Debian awscli not installed"
case "${1:?server kind}" in
  test-s3) start_test_s3 ;;
  s3rver) start_s3rver ;;
  *) fail "unknown server $1" ;;
esac
use_endpoint

# 1. ferry cp up (with every metadata flag), aws reads it back.
printf 'hello, ferry\n' >"$TMP/small.txt"
"$FERRY" cp "$TMP/small.txt" "s3://bkt/odd dir/a b+c%~ü.txt" \
  --content-type 'text/plain; charset=utf-8' --cache-control 'max-age=60' \
  --content-disposition 'attachment; filename="x.txt"' --content-language en \
  --content-encoding identity --expires 'Wed, 21 Oct 2037 07:28:00 GMT' \
  --metadata Owner=ferry --metadata note='two words'
aws_s3 s3 cp "s3://bkt/odd dir/a b+c%~ü.txt" "$TMP/small.back" --quiet
same_bytes "$TMP/small.txt" "$TMP/small.back"
aws_s3 s3api head-object --bucket bkt --key "odd dir/a b+c%~ü.txt" >"$TMP/head.json"
/usr/bin/python3 - "$TMP/head.json" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
want = {"ContentType": "text/plain; charset=utf-8", "CacheControl": "max-age=60",
        "ContentDisposition": 'attachment; filename="x.txt"', "ContentLanguage": "en",
        "ContentEncoding": "identity", "ContentLength": 13}
for k, v in want.items():
    assert h.get(k) == v, f"{k}: {h.get(k)!r} != {v!r}"
assert h["Metadata"] == {"owner": "ferry", "note": "two words"}, h["Metadata"]
assert h["ETag"].strip('"') == "8d6e3fd7e5bbd7fb4b0e0f05a9eec1a0" or len(h["ETag"].strip('"')) == 32
assert "2037" in str(h.get("Expires", h.get("ExpiresString", ""))), h
PY

# A Content-Type guessed from the extension, as aws s3 cp does.
printf '{"a":1}' >"$TMP/doc.json"
"$FERRY" cp "$TMP/doc.json" s3://bkt/docs/
test "$(aws_s3 s3api head-object --bucket bkt --key docs/doc.json --query ContentType --output text)" \
  = application/json || fail "content type not guessed"

# 2. Multipart: 37 MiB in 5 MiB parts (8 parts, the last short).
make_file "$TMP/big.bin" $((37 << 20))
"$FERRY" cp "$TMP/big.bin" s3://bkt/big/big.bin --multipart-threshold 8M --part-size 5M --concurrency 4
if [ "$1" = test-s3 ]; then
  # (s3rver gives multipart objects a plain MD5 ETag; S3 and our server "-N".)
  etag=$(aws_s3 s3api head-object --bucket bkt --key big/big.bin --query ETag --output text)
  case "$etag" in *-8\"|*-8) ;; *) fail "multipart ETag $etag does not end in -8" ;; esac
fi
aws_s3 s3 cp s3://bkt/big/big.bin "$TMP/big.aws" --quiet
same_bytes "$TMP/big.bin" "$TMP/big.aws"
# ferry downloads it in parallel ranges, into a directory.
mkdir "$TMP/down"
"$FERRY" cp s3://bkt/big/big.bin "$TMP/down" --multipart-threshold 8M --part-size 5M
same_bytes "$TMP/big.bin" "$TMP/down/big.bin"
ls -A "$TMP/down" | grep -qv '^big.bin$' && fail "download left extra files: $(ls -A "$TMP/down")"

# 3. The reverse: aws writes (multipart too), ferry reads.
make_file "$TMP/aws.bin" $((12 << 20))
aws_s3 s3 cp "$TMP/aws.bin" "s3://bkt/from aws/aws.bin" --quiet \
  --content-type application/x-test --metadata origin=aws
"$FERRY" cp "s3://bkt/from aws/aws.bin" "$TMP/aws.ferry"
same_bytes "$TMP/aws.bin" "$TMP/aws.ferry"
# ferry copies it within the bucket (server-side where the server can) and
# the metadata comes along.
"$FERRY" cp "s3://bkt/from aws/aws.bin" "s3://bkt/copied/aws.bin"
aws_s3 s3api head-object --bucket bkt --key copied/aws.bin >"$TMP/copied.json"
/usr/bin/python3 - "$TMP/copied.json" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
assert h["ContentType"] == "application/x-test", h
assert h["Metadata"] == {"origin": "aws"}, h
assert h["ContentLength"] == 12 << 20, h
PY
aws_s3 s3 cp s3://bkt/copied/aws.bin "$TMP/copied.bin" --quiet
same_bytes "$TMP/aws.bin" "$TMP/copied.bin"

# 4. ferry ls agrees with what is there.
"$FERRY" ls -r --json s3://bkt >"$TMP/ls.json"
/usr/bin/python3 - "$TMP/ls.json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
keys = [r["key"] for r in rows]
assert keys == sorted(keys, key=lambda k: k.encode()), keys
assert set(keys) == {"odd dir/a b+c%~ü.txt", "docs/doc.json", "big/big.bin", "from aws/aws.bin",
                     "copied/aws.bin"}, keys
sizes = {r["key"]: r["size"] for r in rows}
assert sizes["big/big.bin"] == 37 << 20
PY
"$FERRY" ls s3://bkt | grep -q 'PRE odd dir/' || fail "ls without -r shows no prefixes"
echo "cp interop ($1): ok"
