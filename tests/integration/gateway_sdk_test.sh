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
need node
[ -x "$AWS" ] || skip "awscli not installed"
PEERS=$FERRY_SOURCE/testing/peers
[ -d "$PEERS/node_modules/@aws-sdk/client-s3" ] || skip "the AWS SDK for JavaScript is not installed (scripts/setup.sh test)"

start_migrate_pair
seed_source 20 4 2048
"${M[@]}" s3://bkt s3://bkt --src-profile src --dst-profile dst --detach --json >"$TMP/job.json" ||
  fail "--detach failed"
JOB=$(json_field job <"$TMP/job.json")
printf 'gwkey gwsecret\n' >"$TMP/gw.keys"
"$FERRY" gateway --job "$JOB" --state "$STATE" --listen 127.0.0.1:0 --port-file "$TMP/gw.port" \
  --credentials "$TMP/gw.keys" >"$TMP/gw.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do [ -s "$TMP/gw.port" ] && break; sleep 0.1; done
[ -s "$TMP/gw.port" ] || { cat "$TMP/gw.log" >&2; fail "the gateway did not start"; }
GW_URL="http://127.0.0.1:$(cat "$TMP/gw.port")"
add_profile gw "$GW_URL" gwkey gwsecret

# ES modules resolve packages from the script's own folder: the client runs
# beside a link to the peers' node_modules.
mkdir -p "$TMP/sdk" && ln -s "$PEERS/node_modules" "$TMP/sdk/node_modules"
cp "$FERRY_SOURCE/tests/integration/sdk_js_client.mjs" "$TMP/sdk/"

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
