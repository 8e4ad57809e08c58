#!/usr/bin/env bash
# Flexible checksums kept with objects by ferry-test-s3, as S3 keeps them,
# seen through Debian's awscli (2.9: it predates CRC64NVME and the checksum
# types, so those go by curl --aws-sigv4) and checked against checksum_ref.py (zlib,
# hashlib and table CRCs written from the algorithms' definitions):
#  - PutObject with each algorithm: the checksum is verified, stored and
#    returned by HeadObject/GetObject with x-amz-checksum-mode: ENABLED
#    (FULL_OBJECT), not without it, and not for a range;
#  - a wrong checksum: BadDigest and nothing stored;
#  - an upload naming none gets CRC64NVME, as S3 gives since 2025;
#  - multipart: per-part checksums (UploadPart's answer, ListParts), the
#    COMPOSITE "-N" type (CRC32C and SHA256), the FULL_OBJECT type (CRC32,
#    and CRC64NVME by default), a part checksum in the Complete that differs
#    (InvalidPart), a combination S3 refuses (InvalidRequest), and
#    GetObjectAttributes (Checksum, ObjectParts, ObjectSize);
#  - ferry migrate and ferry cp carry each source's checksum to the
#    destination, which compares and keeps it;
#  - a restart of a --dir server keeps them.
# With the argument "gateway", the same PutObject and multipart steps go
# through `ferry gateway` in front of a test server: the gateway verifies
# each checksum and passes it on (the upload's algorithm and type, each
# part's, the parts' in the Complete), and answers HeadObject and
# GetObjectAttributes from what the destination keeps.
source "$(dirname "$0")/lib.sh"
[ -x "$AWS" ] || skip "awscli not installed"
REF=("/usr/bin/python3" "$FERRY_SOURCE/tests/integration/checksum_ref.py")
DIR="$TMP/s3dir"
MODE=${1:-test-s3}
if [ "$MODE" = gateway ]; then
  start_test_s3; A_URL=$S3_URL
  add_profile src "$A_URL" "$TEST_KEY" "$TEST_SECRET"
  start_test_s3 --min-part-size 65536; B_URL=$S3_URL
  add_profile dst "$B_URL" "$TEST_KEY" "$TEST_SECRET"
  use_state
  M=("$FERRY" migrate --state "$STATE")
  start_job_gateway
  S3_URL=$GW_URL TEST_KEY=gwkey TEST_SECRET=gwsecret
else
  start_test_s3 --dir "$DIR" --min-part-size 65536
fi
A_PID=${PIDS[-1]}
add_profile t "$S3_URL" "$TEST_KEY" "$TEST_SECRET"
s3api() { awsp t s3api "$@"; }
q() { /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
sig=(--aws-sigv4 "aws:amz:us-east-1:s3" --user "$TEST_KEY:$TEST_SECRET" -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD')
hdrs() { curl -s -o /dev/null -D - "${sig[@]}" "$@" | tr -d '\r'; }
# stored KEY: "VALUE TYPE" of the checksum HeadObject returns when asked.
stored() {
  hdrs -I "$S3_URL/bkt/$1" -H 'x-amz-checksum-mode: ENABLED' |
    awk -F': ' 'tolower($1) ~ /^x-amz-checksum-(crc|sha)/ {v=$2} tolower($1) == "x-amz-checksum-type" {t=$2} END {print v, t}'
}

head -c 300000 /dev/urandom >"$TMP/body"
for alg in CRC32 CRC32C SHA1 SHA256; do
  want=$("${REF[@]}" "$alg" "$TMP/body")
  sent=$(s3api put-object --bucket bkt --key "put/$alg" --body "$TMP/body" --checksum-algorithm "$alg" |
    q "d.get('Checksum$alg','')") || fail "put-object with $alg"
  [ "$sent" = "$want" ] || fail "PutObject $alg answered $sent, want $want"
  got=$(s3api head-object --bucket bkt --key "put/$alg" --checksum-mode ENABLED | q "d.get('Checksum$alg','')")
  [ "$got" = "$want" ] || fail "HeadObject $alg: $got, want $want"
  [ "$(stored "put/$alg")" = "$want FULL_OBJECT" ] || fail "stored $alg: $(stored "put/$alg")"
done
want=$("${REF[@]}" CRC64NVME "$TMP/body")
code=$(curl -s -o /dev/null -w '%{http_code}' "${sig[@]}" -T "$TMP/body" "$S3_URL/bkt/put/CRC64NVME" \
  -H "x-amz-checksum-crc64nvme: $want")
[ "$code" = 200 ] && [ "$(stored put/CRC64NVME)" = "$want FULL_OBJECT" ] || fail "CRC64NVME: $code $(stored put/CRC64NVME)"
echo "PutObject: CRC32, CRC32C, CRC64NVME, SHA1, SHA256 verified, stored and returned"

# Only when asked for, and only for the whole object.
hdrs -I "$S3_URL/bkt/put/SHA1" | grep -qi '^x-amz-checksum-sha1' && fail "a checksum without checksum-mode"
hdrs "$S3_URL/bkt/put/SHA1" -H 'x-amz-checksum-mode: ENABLED' | grep -qi '^x-amz-checksum-sha1' ||
  fail "GET with checksum-mode answered no checksum"
hdrs "$S3_URL/bkt/put/SHA1" -H 'x-amz-checksum-mode: ENABLED' -H 'Range: bytes=0-9' |
  grep -qi '^x-amz-checksum-sha1' && fail "a ranged GET answered the whole object's checksum"

# Named none: CRC64NVME, computed by the server.
curl -sf "${sig[@]}" -T "$TMP/body" "$S3_URL/bkt/put/plain" >/dev/null || fail "a PUT with no checksum"
got=$(stored put/plain)
[ "$got" = "$("${REF[@]}" CRC64NVME "$TMP/body") FULL_OBJECT" ] || fail "default checksum: $got"

# A wrong one: BadDigest, nothing stored.
bad=$(s3api put-object --bucket bkt --key put/bad --body "$TMP/body" --checksum-crc32 AAAAAA== 2>&1) &&
  fail "a wrong CRC32 was taken"
echo "$bad" | grep -q BadDigest || fail "a wrong CRC32: $bad"
s3api head-object --bucket bkt --key put/bad >/dev/null 2>&1 && fail "the object with a wrong checksum was stored"

# Multipart. parts FILE N: N parts of 100,000 bytes.
head -c 250000 /dev/urandom >"$TMP/whole"
split -b 100000 -d -a 1 "$TMP/whole" "$TMP/part."
# curl 7.88 signs the query as written, where S3 (and ferry) canonicalize a
# bare "uploads" as "uploads=": so the URL says "uploads=".
multipart() {  # multipart KEY [HEADER...]: creates an upload; prints its id
  local key=$1 h=() x; shift
  for x in "$@"; do h+=(-H "$x"); done
  curl -sf "${sig[@]}" -X POST "${h[@]}" "$S3_URL/bkt/$key?uploads=" |
    sed -n 's:.*<UploadId>\(.*\)</UploadId>.*:\1:p'
}
upload_parts() {  # upload_parts KEY ID ALG: prints each part's JSON answer, one per line
  local n
  for n in 1 2 3; do
    s3api upload-part --bucket bkt --key "$1" --upload-id "$2" --part-number "$n" \
      --body "$TMP/part.$((n - 1))" ${3:+--checksum-algorithm "$3"} | tr -d '\n'
    echo
  done
}
complete_json() {  # complete_json ALG < part answers: the MultipartUpload argument
  /usr/bin/python3 -c "
import json, sys
alg = sys.argv[1]
parts = []
for n, line in enumerate(sys.stdin, 1):
    d = json.loads(line)
    p = {'PartNumber': n, 'ETag': d['ETag']}
    if alg: p['Checksum' + alg] = d['Checksum' + alg]
    parts.append(p)
print(json.dumps({'Parts': parts}))" "$1"
}

for alg in CRC32C SHA256; do
  key="mp/composite-$alg"
  id=$(multipart "$key" "x-amz-checksum-algorithm: $alg")
  [ -n "$id" ] || fail "create $key"
  upload_parts "$key" "$id" "$alg" >"$TMP/answers"
  mapfile -t part_sums < <(while read -r l; do echo "$l" | q "d['Checksum$alg']"; done <"$TMP/answers")
  for n in 0 1 2; do
    [ "${part_sums[$n]}" = "$("${REF[@]}" "$alg" "$TMP/part.$n")" ] || fail "part $((n + 1)) $alg: ${part_sums[$n]}"
  done
  listed=$(s3api list-parts --bucket bkt --key "$key" --upload-id "$id" |
    q "' '.join(p['Checksum$alg'] for p in d['Parts']) + ' ' + d.get('ChecksumAlgorithm','')")
  [ "$listed" = "${part_sums[*]} $alg" ] || fail "ListParts $alg: $listed"
  s3api complete-multipart-upload --bucket bkt --key "$key" --upload-id "$id" \
    --multipart-upload "$(complete_json "$alg" <"$TMP/answers")" >"$TMP/done.json" || fail "complete $key"
  want=$("${REF[@]}" --composite "$alg" "${part_sums[@]}")
  [ "$(q "d.get('Checksum$alg','')" <"$TMP/done.json")" = "$want" ] || fail "Complete $alg: $(cat "$TMP/done.json")"
  [ "$(stored "$key")" = "$want COMPOSITE" ] || fail "HeadObject composite $alg: $(stored "$key"), want $want"
  attrs=$(s3api get-object-attributes --bucket bkt --key "$key" \
    --object-attributes Checksum ObjectParts ObjectSize ETag |
    q "d['Checksum']['Checksum$alg'] + ' ' + str(d['ObjectSize']) + ' ' + str(d['ObjectParts']['TotalPartsCount']) + ' ' + ' '.join(p['Checksum$alg'] for p in d['ObjectParts']['Parts'])")
  [ "$attrs" = "${want%-3} 250000 3 ${part_sums[*]}" ] || fail "GetObjectAttributes $alg: $attrs"
done
echo "multipart COMPOSITE: CRC32C and SHA256 parts, -3 values and GetObjectAttributes"

# FULL_OBJECT CRC32, and the default (no algorithm): CRC64NVME of the whole.
id=$(multipart mp/full-CRC32 "x-amz-checksum-algorithm: CRC32" "x-amz-checksum-type: FULL_OBJECT")
upload_parts mp/full-CRC32 "$id" CRC32 >"$TMP/answers"
s3api complete-multipart-upload --bucket bkt --key mp/full-CRC32 --upload-id "$id" \
  --multipart-upload "$(complete_json CRC32 <"$TMP/answers")" >/dev/null || fail "complete full CRC32"
got=$(stored mp/full-CRC32)
[ "$got" = "$("${REF[@]}" CRC32 "$TMP/whole") FULL_OBJECT" ] || fail "full-object CRC32: $got"
id=$(multipart mp/default)
upload_parts mp/default "$id" "" >"$TMP/answers"
s3api complete-multipart-upload --bucket bkt --key mp/default --upload-id "$id" \
  --multipart-upload "$(complete_json "" <"$TMP/answers")" >/dev/null || fail "complete default"
got=$(stored mp/default)
[ "$got" = "$("${REF[@]}" CRC64NVME "$TMP/whole") FULL_OBJECT" ] || fail "default multipart checksum: $got"
echo "multipart FULL_OBJECT: CRC32 asked for, CRC64NVME by default"

# Refusals: a part checksum in the Complete that differs; a combination S3
# refuses; a part of another algorithm than its upload's.
id=$(multipart mp/refused "x-amz-checksum-algorithm: CRC32C")
upload_parts mp/refused "$id" CRC32C >"$TMP/answers"
spoiled=$(complete_json CRC32C <"$TMP/answers" | sed 's/"ChecksumCRC32C": "[^"]*"/"ChecksumCRC32C": "AAAAAA=="/')
out=$(s3api complete-multipart-upload --bucket bkt --key mp/refused --upload-id "$id" --multipart-upload "$spoiled" 2>&1) &&
  fail "a Complete with wrong part checksums was taken"
echo "$out" | grep -q InvalidPart || fail "wrong part checksum: $out"
out=$(s3api upload-part --bucket bkt --key mp/refused --upload-id "$id" --part-number 4 --body "$TMP/part.0" \
  --checksum-algorithm SHA1 2>&1) && fail "a SHA1 part of a CRC32C upload was taken"
echo "$out" | grep -q InvalidRequest || fail "a part of another algorithm: $out"
out=$(curl -s "${sig[@]}" -X POST -H "x-amz-checksum-algorithm: SHA256" -H "x-amz-checksum-type: FULL_OBJECT" \
  "$S3_URL/bkt/mp/x?uploads=")
echo "$out" | grep -q InvalidRequest || fail "SHA256 FULL_OBJECT: $out"
echo "refused: a wrong part checksum, a part of another algorithm, SHA256 FULL_OBJECT"

if [ "$MODE" = gateway ]; then
  n=$(curl -s "$GW_URL/_ferry/metrics" | awk '$1 == "ferry_gateway_streamed_uploads_total" {print $2}')
  echo "through the gateway: $n uploads streamed"
  echo "PASS"
  exit 0
fi

# ferry migrate and ferry cp carry a source's checksum to the destination,
# which compares and keeps it (without, it would give CRC64NVME).
A_URL=$S3_URL
add_profile src "$A_URL" "$TEST_KEY" "$TEST_SECRET"
start_test_s3 --min-part-size 65536
B_URL=$S3_URL
add_profile dst "$B_URL" "$TEST_KEY" "$TEST_SECRET"
"$FERRY" migrate --state "$TMP/state" s3://bkt/put/ s3://bkt/copied/ --src-profile src --dst-profile dst \
  >"$TMP/migrate.log" 2>&1 || { cat "$TMP/migrate.log" >&2; fail "ferry migrate"; }
"$FERRY" cp s3://bkt/put/SHA1 s3://bkt/cp/SHA1 --src-profile src --dst-profile dst >"$TMP/cp.log" 2>&1 ||
  { cat "$TMP/cp.log" >&2; fail "ferry cp"; }
for alg in CRC32 CRC32C SHA1 SHA256; do
  want=$(S3_URL=$A_URL stored "put/$alg")
  got=$(S3_URL=$B_URL stored "copied/$alg")
  [ "$got" = "$want" ] || fail "migrate carried $alg as $got, want $want"
done
[ "$(S3_URL=$B_URL stored cp/SHA1)" = "$(S3_URL=$A_URL stored put/SHA1)" ] || fail "cp carried $(S3_URL=$B_URL stored cp/SHA1)"
# Copied in parts (the S3 store's own size, not the source's 100,000
# bytes): the same algorithm, each part checked by the destination; a
# full-object CRC equals the source's, a composite one is of the copy's
# own parts.
"$FERRY" migrate --state "$TMP/state2" s3://bkt/mp/ s3://bkt/mpcopy/ --src-profile src --dst-profile dst \
  --multipart-threshold 100K --part-size 64K >"$TMP/migrate2.log" 2>&1 || { cat "$TMP/migrate2.log" >&2; fail "ferry migrate in parts"; }
"$FERRY" cp s3://bkt/mp/full-CRC32 s3://bkt/cpparts/full-CRC32 --src-profile src --dst-profile dst \
  --multipart-threshold 100K --part-size 64K >"$TMP/cp2.log" 2>&1 || { cat "$TMP/cp2.log" >&2; fail "ferry cp in parts"; }
for key in full-CRC32 default; do
  want=$(S3_URL=$A_URL stored "mp/$key")
  [ "$(S3_URL=$B_URL stored "mpcopy/$key")" = "$want" ] || fail "migrate in parts carried $key as $(S3_URL=$B_URL stored "mpcopy/$key"), want $want"
done
[ "$(S3_URL=$B_URL stored cpparts/full-CRC32)" = "$(S3_URL=$A_URL stored mp/full-CRC32)" ] || fail "cp in parts: $(S3_URL=$B_URL stored cpparts/full-CRC32)"
for alg in CRC32C SHA256; do
  got=$(S3_URL=$B_URL stored "mpcopy/composite-$alg")
  [ "${got##* }" = COMPOSITE ] || fail "composite $alg copied as $got"
  awsp dst s3api get-object --bucket bkt --key "mpcopy/composite-$alg" "$TMP/mpc" >/dev/null
  size=$(awsp dst s3api get-object-attributes --bucket bkt --key "mpcopy/composite-$alg" \
    --object-attributes ObjectParts | q "d['ObjectParts']['Parts'][0]['Size']")
  split -b "$size" -d -a 3 "$TMP/mpc" "$TMP/mpc."
  want=$("${REF[@]}" --composite "$alg" $(for f in "$TMP"/mpc.???; do "${REF[@]}" "$alg" "$f"; done))
  [ "${got% *}" = "$want" ] || fail "composite $alg of the copy's parts: $got, want $want"
  rm -f "$TMP"/mpc.???
done
put_b=$(curl -s "$B_URL/_admin/stats" | q "d['ops'].get('put',{}).get('errors',0)")
[ "$put_b" = 0 ] || fail "the destination refused $put_b carried checksums"
echo "migrate and cp carried CRC32, CRC32C, SHA1 and SHA256 to the destination, whole and in parts"
kill "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null || true
S3_URL=$A_URL

# A --dir server keeps them across a restart.
before=$(stored mp/composite-SHA256)
kill "$A_PID"; wait "$A_PID" 2>/dev/null || true
start_test_s3 --dir "$DIR" --min-part-size 65536
PROFILE_URL[t]=$S3_URL
after=$(stored mp/composite-SHA256)
[ "$before" = "$after" ] || fail "after a restart: $after, was $before"
parts=$(s3api get-object-attributes --bucket bkt --key mp/composite-SHA256 --object-attributes ObjectParts | q "d['ObjectParts']['TotalPartsCount']")
[ "$parts" = 3 ] || fail "parts after a restart: $parts"
echo "kept across a restart"
echo "PASS"
