#!/usr/bin/env bash
# ferry migrate between two real peers we did not write: one s3rver (npm) to
# another, with awkward keys (spaces, unicode, '+', '%', a 1024-byte key),
# metadata, and a multipart object; checked with Debian's awscli
# (list-objects-v2 and s3 cp). s3rver cannot store keys with "//" (see the
# conformance suite's declared gaps), so those are covered against our own
# test server in migrate_test.sh.
source "$(dirname "$0")/lib.sh"

start_s3rver; A_URL=$S3_URL
start_s3rver; B_URL=$S3_URL
add_profile src "$A_URL" S3RVER S3RVER
add_profile dst "$B_URL" S3RVER S3RVER
STATE="$TMP/state"

# 1024 bytes, in components short enough for s3rver's file-per-key layout.
LONG=$(/usr/bin/python3 -c "print('long/' + ('k' * 200 + '/') * 4 + 'k' * 215)")
[ ${#LONG} = 1024 ] || fail "test key is ${#LONG} bytes"
KEYS=("with space.txt" "plus+sign" "per%cent" "ünï/日本語/ключ" "a/b/c/deep.txt" "$LONG")
for k in "${KEYS[@]}"; do
  printf 'body of %s' "$k" >"$TMP/body"
  awsp src s3api put-object --bucket bkt --key "$k" --body "$TMP/body" --content-type text/plain \
    --metadata "origin=peer" >/dev/null || fail "s3rver refused key '$k'"
done
for i in $(seq 1 200); do echo "n$i" >"$TMP/n$i"; done
awsp src s3 cp --recursive --quiet "$TMP" s3://bkt/many/ --exclude '*' --include 'n*'
make_file "$TMP/big.bin" $((12 << 20))
awsp src s3 cp --quiet "$TMP/big.bin" s3://bkt/big.bin
N=$((${#KEYS[@]} + 201))

# The default listing (key ranges): s3rver 3.7 answers a delimited listing
# with only some of its common prefixes, which only makes fewer split points
# (migrate_listing_s3rver_test.sh is about that).
"$FERRY" migrate --state "$STATE" s3://bkt s3://bkt --src-profile src --dst-profile dst --json \
  --multipart-threshold 5M --part-size 5M >"$TMP/run.json" 2>"$TMP/run.err" ||
  fail "s3rver -> s3rver failed: $(tail -2 "$TMP/run.err") $(grep dead_letter "$TMP/run.json" | head -2)"
/usr/bin/python3 - "$TMP/run.json" "$N" <<'PY' || fail "summary: $(tail -1 "$TMP/run.json")"
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
n = int(sys.argv[2])
assert s["state"] == "completed" and s["listed"] == n and s["transferred"] == n, s
assert s["failed"] == 0 and s["skipped"] == 0, s
PY

keys_of() {  # keys_of PROFILE: "key size" per object, sorted
  awsp "$1" s3api list-objects-v2 --bucket bkt --output json |
    /usr/bin/python3 -c "import json,sys; [print(o['Key'], o['Size']) for o in sorted(json.load(sys.stdin)['Contents'], key=lambda o:o['Key'])]"
}
keys_of src >"$TMP/la"; keys_of dst >"$TMP/lb"
[ "$(wc -l <"$TMP/lb")" = "$N" ] || fail "destination lists $(wc -l <"$TMP/lb") objects, want $N"
diff "$TMP/la" "$TMP/lb" >/dev/null || fail "listings differ: $(diff "$TMP/la" "$TMP/lb" | head -3)"
for k in "${KEYS[@]}"; do
  awsp dst s3 cp --quiet "s3://bkt/$k" "$TMP/got" || fail "aws s3 cp cannot read '$k' back"
  [ "$(cat "$TMP/got")" = "body of $k" ] || fail "'$k' has the wrong bytes"
  awsp dst s3api head-object --bucket bkt --key "$k" >"$TMP/h.json"
  grep -q '"origin": "peer"' "$TMP/h.json" || fail "'$k' lost its metadata"
  grep -q '"ContentType": "text/plain"' "$TMP/h.json" || fail "'$k' lost its Content-Type"
done
awsp dst s3 cp --quiet s3://bkt/big.bin "$TMP/big.back"
same_bytes "$TMP/big.bin" "$TMP/big.back"
echo "migrate_s3rver_test: ok ($N objects)"
