#!/usr/bin/env bash
# The S3 clients of the matrix that the other tests do not drive, through
# `ferry gateway` and against ferry-test-s3, each at its defaults, each
# printing its version: rclone (its S3 backend: a single-part upload, a
# multipart upload, read, list, a presigned link, delete), curl
# --aws-sigv4 (PUT, GET, HEAD, list, a multipart upload by hand, DELETE;
# curl makes no presigned URLs) and Debian's boto3 (boto3_client.py:
# put_object, upload_file multipart, reads, list, presigned GET and PUT,
# deletes). Debian's awscli and the AWS SDK for JavaScript go through
# gateway_sdk, gateway_test and checksums_test.
source "$(dirname "$0")/lib.sh"
need curl
need rclone
start_migrate_pair
seed_source 5 1 1024
start_job_gateway
echo "rclone: $(rclone version | head -1)"
echo "curl: $(curl --version | head -1 | cut -d' ' -f1-2)"

head -c 3000 /dev/urandom >"$TMP/small"
head -c $((12 * 1024 * 1024 + 77)) /dev/urandom >"$TMP/big"

# TARGET NAME URL KEY SECRET
TARGETS=("gateway $GW_URL gwkey gwsecret" "test-s3 $B_URL $TEST_KEY $TEST_SECRET")
for t in "${TARGETS[@]}"; do
  read -r name url key secret <<<"$t"
  # rclone, configured by environment as a user's remote would be.
  export RCLONE_CONFIG_R_TYPE=s3 RCLONE_CONFIG_R_PROVIDER=Other RCLONE_CONFIG_R_ENDPOINT="$url" \
    RCLONE_CONFIG_R_ACCESS_KEY_ID="$key" RCLONE_CONFIG_R_SECRET_ACCESS_KEY="$secret" \
    RCLONE_CONFIG_R_REGION=us-east-1 RCLONE_CONFIG_R_FORCE_PATH_STYLE=true
  # rclone 1.60 (aws-sdk-go) cannot take AWS_CA_BUNDLE with its own
  # transport ("LoadCustomCABundleError"); plain HTTP needs none.
  rc=(env -u AWS_CA_BUNDLE rclone --config /dev/null -q)
  "${rc[@]}" copyto "$TMP/small" r:bkt/rclone/small || fail "rclone write through $name"
  "${rc[@]}" copyto "$TMP/big" r:bkt/rclone/big --s3-upload-cutoff 5M --s3-chunk-size 5M ||
    fail "rclone multipart through $name"
  "${rc[@]}" cat r:bkt/rclone/small | cmp -s - "$TMP/small" || fail "rclone read of small through $name"
  "${rc[@]}" copyto r:bkt/rclone/big "$TMP/big.back" || fail "rclone read of big through $name"
  cmp -s "$TMP/big.back" "$TMP/big" || fail "rclone read other bytes of big through $name"
  listed=$("${rc[@]}" lsf r:bkt/rclone/ | tr '\n' ' ')
  [ "$listed" = "big small " ] || fail "rclone listed '$listed' through $name"
  link=$("${rc[@]}" link r:bkt/rclone/small --expire 5m) || fail "rclone link through $name"
  curl -sf "$link" | cmp -s - "$TMP/small" || fail "rclone's presigned link through $name"
  "${rc[@]}" delete r:bkt/rclone/ || fail "rclone delete through $name"
  [ -z "$("${rc[@]}" lsf r:bkt/rclone/)" ] || fail "rclone delete left objects through $name"
  echo "$name: rclone write, multipart, read, list, presigned link, delete"

  # curl --aws-sigv4 (curl 7.88 signs the query as written: bare query
  # names go with "=", and query values already encoded: curl%2F).
  sig=(--aws-sigv4 "aws:amz:us-east-1:s3" --user "$key:$secret" -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD')
  curl -sf "${sig[@]}" -T "$TMP/small" "$url/bkt/curl/small" >/dev/null || fail "curl PUT through $name"
  curl -sf "${sig[@]}" "$url/bkt/curl/small" | cmp -s - "$TMP/small" || fail "curl GET through $name"
  len=$(curl -sf -I "${sig[@]}" "$url/bkt/curl/small" | tr -d '\r' | awk -F': ' 'tolower($1)=="content-length"{print $2}')
  [ "$len" = 3000 ] || fail "curl HEAD through $name: $len"
  id=$(curl -sf "${sig[@]}" -X POST "$url/bkt/curl/big?uploads=" | sed -n 's:.*<UploadId>\(.*\)</UploadId>.*:\1:p')
  [ -n "$id" ] || fail "curl create multipart through $name"
  split -b $((6 * 1024 * 1024)) -d -a 1 "$TMP/big" "$TMP/cpart."
  parts=""
  for n in 0 1 2; do
    etag=$(curl -sf "${sig[@]}" -T "$TMP/cpart.$n" -D - -o /dev/null \
      "$url/bkt/curl/big?partNumber=$((n + 1))&uploadId=$id" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')
    [ -n "$etag" ] || fail "curl part $((n + 1)) through $name"
    parts+="<Part><PartNumber>$((n + 1))</PartNumber><ETag>$etag</ETag></Part>"
  done
  curl -sf "${sig[@]}" -X POST --data-binary "<CompleteMultipartUpload>$parts</CompleteMultipartUpload>" \
    "$url/bkt/curl/big?uploadId=$id" | grep -q CompleteMultipartUploadResult || fail "curl complete through $name"
  curl -sf "${sig[@]}" "$url/bkt/curl/big" | cmp -s - "$TMP/big" || fail "curl GET of the multipart object through $name"
  keys=$(curl -sf "${sig[@]}" "$url/bkt?list-type=2&prefix=curl%2F" | grep -o '<Key>[^<]*</Key>' | tr '\n' ' ')
  [ "$keys" = "<Key>curl/big</Key> <Key>curl/small</Key> " ] || fail "curl list through $name: $keys"
  for k in small big; do
    code=$(curl -s -o /dev/null -w '%{http_code}' "${sig[@]}" -X DELETE "$url/bkt/curl/$k")
    [ "$code" = 204 ] || fail "curl DELETE $k through $name: $code"
  done
  code=$(curl -s -o /dev/null -w '%{http_code}' "${sig[@]}" "$url/bkt/curl/small")
  [ "$code" = 404 ] || fail "GET after curl's DELETE through $name: $code"
  echo "$name: curl PUT, GET, HEAD, multipart, list, DELETE"

  /usr/bin/python3 "$FERRY_SOURCE/tests/integration/boto3_client.py" "$url" "$key" "$secret" bkt "$TMP" \
    >"$TMP/boto3.out" 2>&1 || fail "boto3 through $name: $(tail -25 "$TMP/boto3.out")"
  echo "$name: $(tr '\n' ';' <"$TMP/boto3.out")"
done
echo "PASS"
