#!/usr/bin/env bash
# The clients applications use today, through `ferry gateway` and against
# ferry-test-s3 (the two share the SigV4 and aws-chunked code):
#  - the AWS SDK for JavaScript v3 (npm, at its defaults): a buffer PutObject,
#    a stream PutObject (aws-chunked, STREAMING-UNSIGNED-PAYLOAD-TRAILER with
#    a trailing CRC32), a wrong checksum refused (BadDigest, nothing stored),
#    a lib-storage multipart upload, GET, HEAD, list and delete;
#    and presigned URLs from its presigner used by fetch (PUT, GET, HEAD,
#    DELETE; tampered and expired ones refused), and from `aws s3 presign`;
#  - hand-made streaming uploads in every aws-chunked mode, signed by
#    botocore's signer and a chunk chain computed in Python: each stored
#    whole, and each spoiled one (a wrong trailing checksum, a changed chunk
#    or trailer signature, a framing cut short, a wrong decoded length)
#    refused with S3's error code and nothing stored.
source "$(dirname "$0")/lib.sh"
need curl
[ -x "$AWS" ] || skip "awscli not installed"
need_js_sdk sdk_js_client.mjs

start_migrate_pair
seed_source 20 4 2048
start_job_gateway
add_profile gw "$GW_URL" gwkey gwsecret

# TARGET NAME URL KEY SECRET PROFILE: where each client goes.
TARGETS=("gateway $GW_URL gwkey gwsecret gw" "test-s3 $B_URL $TEST_KEY $TEST_SECRET dst")
for t in "${TARGETS[@]}"; do
  read -r name url key secret profile <<<"$t"
  node "$TMP/sdk/sdk_js_client.mjs" "$url" "$key" "$secret" bkt "sdk/" \
    >"$TMP/sdk-$name.log" 2>&1 || { cat "$TMP/sdk-$name.log" >&2; fail "the JavaScript SDK through $name"; }
  [ "$(grep -c "^ok " "$TMP/sdk-$name.log")" = 9 ] || fail "JavaScript SDK steps through $name: $(cat "$TMP/sdk-$name.log")"
  grep -q '^sent PUT .* STREAMING-UNSIGNED-PAYLOAD-TRAILER aws-chunked x-amz-checksum-crc32' "$TMP/sdk-$name.log" ||
    fail "the SDK sent no aws-chunked stream to $name: $(grep '^sent PUT' "$TMP/sdk-$name.log")"
  echo "$name: $(head -1 "$TMP/sdk-$name.log"), $(grep -c '^ok ' "$TMP/sdk-$name.log") steps"

  for mode in unsigned-trailer signed signed-trailer; do
    obj="raw/$mode"
    got=$(/usr/bin/python3 "$FERRY_SOURCE/tests/integration/aws_chunked_client.py" "$url" "$key" "$secret" \
      bkt "$obj" "$mode" none 150000)
    [ "$got" = "200 -" ] || fail "$mode upload to $name: $got"
    awsp "$profile" s3api get-object --bucket bkt --key "$obj" "$TMP/got" >/dev/null || fail "GET $obj from $name"
    cmp -s "$TMP/got" <(/usr/bin/python3 -c "
import sys; sys.stdout.buffer.write(bytes((i * 7 + i // 251) & 0xFF for i in range(150000)))") ||
      fail "$mode upload to $name stored other bytes"
    spoils=(truncate length)
    [[ $mode == *trailer ]] && spoils+=(checksum)
    [[ $mode == signed* ]] && spoils+=(chunk-signature)
    [ "$mode" = signed-trailer ] && spoils+=(trailer-signature)
    for spoil in "${spoils[@]}"; do
      case $spoil in
        checksum) want="400 BadDigest" ;;
        *-signature) want="403 SignatureDoesNotMatch" ;;
        *) want="400 IncompleteBody" ;;
      esac
      got=$(/usr/bin/python3 "$FERRY_SOURCE/tests/integration/aws_chunked_client.py" "$url" "$key" "$secret" \
        bkt "spoiled/$mode-$spoil" "$mode" "$spoil" 150000)
      [ "$got" = "$want" ] || fail "$mode upload to $name spoiled by $spoil: $got, want $want"
    done
  done
  # awscli's presigner (botocore): a GET by URL alone, and the same URL
  # once its lifetime is over.
  url=$(awsp "$profile" s3 presign s3://bkt/raw/signed --expires-in 2) || fail "aws s3 presign"
  curl -sf -o "$TMP/presigned" "$url" || fail "GET of an awscli presigned URL from $name"
  cmp -s "$TMP/presigned" "$TMP/got" || fail "the presigned GET from $name answered other bytes"
  sleep 3
  code=$(curl -s -o "$TMP/expired" -w '%{http_code}' "$url")
  [ "$code" = 403 ] && grep -q expired "$TMP/expired" || fail "an expired URL from $name: $code $(cat "$TMP/expired")"
  left=$(awsp "$profile" s3api list-objects-v2 --bucket bkt --prefix spoiled/ --query 'length(Contents || `[]`)' --output text)
  [ "$left" = 0 ] || fail "$name stored $left spoiled uploads"
  echo "$name: every aws-chunked mode stored whole, every spoiled upload refused"
done
echo "PASS"
