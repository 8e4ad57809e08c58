#!/usr/bin/env bash
# ferry migrate verify between two S3 servers (argument: test-s3 for ferry's
# own, s3rver for the npm peer), the independent check rclone users run as
# `rclone check`. After a migration, damage done behind ferry's back with
# awscli (an object deleted, one truncated, one changed at the same size,
# one added) is found exactly, each as one line, and the exit code says so;
# --checksum finds a same-size change in a multipart object that only
# reading can prove; --fix requeues what differs into the job and copies
# it; migrate --verify carries the counts in its summary.
source "$(dirname "$0")/lib.sh"
need curl
KIND=${1:-test-s3}
case "$KIND" in
  test-s3) start_test_s3; A_URL=$S3_URL; start_test_s3; B_URL=$S3_URL ;;
  s3rver) start_s3rver; A_URL=$S3_URL; start_s3rver; B_URL=$S3_URL ;;
  *) fail "unknown server kind $KIND" ;;
esac
add_profile src "$A_URL" "$TEST_KEY" "$TEST_SECRET"
add_profile dst "$B_URL" "$TEST_KEY" "$TEST_SECRET"
use_state
M=("$FERRY" migrate --state "$STATE")
V=("$FERRY" migrate verify s3://bkt s3://bkt --src-profile src --dst-profile dst)

N=400
make_objects "$TMP/src" $N 8 3000
make_file "$TMP/src/big.bin" $((12 << 20))
N=$((N + 1))
"${M[@]}" "$TMP/src" s3://bkt/ --dst-profile src -q --multipart-threshold 5M --part-size 5M || fail "seeding failed"
"${M[@]}" s3://bkt s3://bkt --src-profile src --dst-profile dst --json --multipart-threshold 5M \
  --part-size 5M >"$TMP/copy.json" 2>"$TMP/copy.err" || fail "migrate failed: $(tail -2 "$TMP/copy.err")"
JOB=$(head -1 "$TMP/copy.json" | json_field job)

# verify_json OUT [args]: runs verify --json, keeps its exit code in RC.
verify_json() {
  local out=$1; shift
  RC=0
  "${V[@]}" --json "$@" >"$out" 2>"$out.err" || RC=$?
}
counts_are() {  # counts_are FILE matched missing differing extra
  /usr/bin/python3 - "$@" <<'PY' || fail "verify counts: $(tail -1 "$1") $(cat "$1.err")"
import json, sys
v = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
want = [int(x) for x in sys.argv[2:6]]
assert v["event"] == "verify", v
assert [v["matched"], v["missing"], v["differing"], v["extra"]] == want, (v, want)
PY
}

verify_json "$TMP/v0.json"
[ $RC = 0 ] || fail "a faithful copy: exit $RC: $(cat "$TMP/v0.json.err")"
counts_are "$TMP/v0.json" $N 0 0 0
# The multipart copy is proven by ferry's MD5 metadata, the rest by ETags.
/usr/bin/python3 -c "import json,sys; v=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); assert v['by_md5'] == $N and v['by_size_time'] == 0, v" "$TMP/v0.json" ||
  fail "not every pair was proven by MD5: $(tail -1 "$TMP/v0.json")"

# Damage behind ferry's back.
awsp dst s3 rm --quiet s3://bkt/d00/o00000
: >"$TMP/empty"
awsp dst s3 cp --quiet "$TMP/empty" s3://bkt/d01/o00001
size=$(awsp src s3api head-object --bucket bkt --key d02/o00002 --query ContentLength --output text)
head -c "$size" /dev/zero | tr '\0' 'z' >"$TMP/same-size"
awsp dst s3 cp --quiet "$TMP/same-size" s3://bkt/d02/o00002
echo "only here" >"$TMP/extra"
awsp dst s3 cp --quiet "$TMP/extra" s3://bkt/zz/extra.txt

RC=0; "${V[@]}" >"$TMP/v1.txt" 2>"$TMP/v1.err" || RC=$?
[ $RC = 5 ] || fail "damage found: exit $RC, want 5: $(cat "$TMP/v1.err")"
grep -q "^missing  d00/o00000$" "$TMP/v1.txt" || fail "the deleted object: $(cat "$TMP/v1.txt")"
grep -q "^differs  d01/o00001: size [0-9]* at the source, 0 at the destination$" "$TMP/v1.txt" ||
  fail "the truncated object: $(cat "$TMP/v1.txt")"
grep -q "^differs  d02/o00002: MD5 " "$TMP/v1.txt" || fail "the same-size change: $(cat "$TMP/v1.txt")"
grep -q "^extra    zz/extra.txt$" "$TMP/v1.txt" || fail "the extra object: $(cat "$TMP/v1.txt")"
[ "$(wc -l <"$TMP/v1.txt")" = 5 ] || fail "4 differences and a summary, got: $(cat "$TMP/v1.txt")"
grep -q "^verify: $((N - 3)) matched, 1 missing, 2 different, 1 only at the destination" "$TMP/v1.txt" ||
  fail "summary line: $(tail -1 "$TMP/v1.txt")"
verify_json "$TMP/v1.json"
[ $RC = 5 ] || fail "--json: exit $RC"
counts_are "$TMP/v1.json" $((N - 3)) 1 2 1
[ "$(grep -c '"event":"difference"' "$TMP/v1.json")" = 4 ] || fail "--json differences: $(cat "$TMP/v1.json")"

# A same-size change in a multipart object, written by another tool: no MD5
# proves either side on S3 (its ETag is a multipart one, and awscli adds no
# MD5 metadata), and the copy is newer: size and time say the same. Only
# reading both can tell. (s3rver gives a multipart object the MD5 of its
# whole body as ETag, which is an MD5 ferry can use: found without reading.)
cp "$TMP/src/big.bin" "$TMP/big.changed"
printf 'X' | dd of="$TMP/big.changed" bs=1 seek=$((7 << 20)) conv=notrunc status=none
awsp dst s3 cp --quiet "$TMP/big.changed" s3://bkt/big.bin  # awscli uploads it in parts
verify_json "$TMP/v2.json"
if [ "$KIND" = s3rver ]; then
  counts_are "$TMP/v2.json" $((N - 4)) 1 3 1
else
  counts_are "$TMP/v2.json" $((N - 3)) 1 2 1
fi
verify_json "$TMP/v3.json" --checksum
counts_are "$TMP/v3.json" $((N - 4)) 1 3 1
# Read (content) where no MD5 was known; on s3rver the ETags already told.
grep -q '"key":"big.bin","src_size":12582912,"dst_size":12582912,"why":"\(content\|MD5\) ' "$TMP/v3.json" ||
  fail "--checksum: big.bin: $(grep big.bin "$TMP/v3.json")"
if [ "$KIND" = test-s3 ]; then
  grep -q '"key":"big.bin",.*"why":"content ' "$TMP/v3.json" || fail "--checksum did not read big.bin"
fi

# --fix: requeue what is missing or different into the job, and copy it
# whatever the destination holds; then nothing is missing or different.
RC=0
"$FERRY" migrate verify --state "$STATE" --fix "$JOB" --checksum --json >"$TMP/fix.json" 2>"$TMP/fix.err" || RC=$?
[ $RC = 0 ] || fail "--fix: exit $RC: $(tail -3 "$TMP/fix.err") $(tail -1 "$TMP/fix.json")"
/usr/bin/python3 - "$TMP/fix.json" <<'PY' || fail "--fix summary: $(tail -1 "$TMP/fix.json")"
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
assert s["event"] == "summary" and s["state"] == "completed", s
assert s["transferred"] >= 4, s  # the four requeued keys, copied again
PY
verify_json "$TMP/v4.json" --checksum
[ $RC = 0 ] || fail "after --fix: exit $RC: $(tail -1 "$TMP/v4.json")"
counts_are "$TMP/v4.json" $N 0 0 1

# migrate --verify: the counts in the summary.
"${M[@]}" s3://bkt s3://bkt/again/ --src-profile src --dst-profile dst --json --verify \
  >"$TMP/again.json" 2>"$TMP/again.err" || fail "migrate --verify: $(tail -2 "$TMP/again.err")"
/usr/bin/python3 - "$TMP/again.json" $N <<'PY' || fail "--verify summary: $(tail -1 "$TMP/again.json")"
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
n = int(sys.argv[2])
assert s["state"] == "completed" and s["listed"] == n, s
assert s["verify"]["ok"] and s["verify"]["matched"] == n and s["verify"]["missing"] == 0, s
PY

# Bad input: one line, exit 1 or 2, nothing else printed.
RC=0; "$FERRY" migrate verify s3://bkt >"$TMP/bad1" 2>&1 || RC=$?
[ $RC = 2 ] || fail "one location: exit $RC"
RC=0; "${V[@]/s3:\/\/bkt/s3://nosuchbucket}" >"$TMP/bad2" 2>&1 || RC=$?
[ $RC = 1 ] || fail "a missing bucket: exit $RC: $(cat "$TMP/bad2")"
[ "$(wc -l <"$TMP/bad2")" = 1 ] || fail "a missing bucket: not one line: $(cat "$TMP/bad2")"
RC=0; "$FERRY" migrate verify s3://bkt s3://bkt --fix >"$TMP/bad3" 2>&1 || RC=$?
[ $RC = 2 ] && grep -q "needs --job" "$TMP/bad3" || fail "--fix without --job: exit $RC: $(cat "$TMP/bad3")"
echo "migrate_verify_test ($KIND): ok"
