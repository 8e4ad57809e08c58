#!/usr/bin/env bash
# Listing that never loses an object to a server's quirks, against s3rver
# 3.7 (npm), which we did not write: its delimiter listing forgets every
# prefix whose keys all sit two or more levels down ("dir a/", "ü/",
# "deep/"), so listing by common prefixes missed a third of this bucket.
# With default settings ferry lists key ranges and finds all 1,200 objects;
# the same with the worker pool (3 workers) and with the listing killed
# mid-way and resumed. s3rver also lists in its directory-walk order, not
# byte order: a bucket where that shows ("a/1" before "a-1") is detected and
# listed flat with a warning, still losing nothing.
source "$(dirname "$0")/lib.sh"

start_s3rver; A_URL=$S3_URL
start_s3rver; B_URL=$S3_URL
add_profile src "$A_URL" S3RVER S3RVER
add_profile dst "$B_URL" S3RVER S3RVER
STATE="$TMP/state"
M=("$FERRY" migrate --state "$STATE")
N=1200
make_prefix_tree "$TMP/tree" $N
"${M[@]}" "$TMP/tree" s3://bkt/ --dst-profile src --json -q >"$TMP/seed.json" || fail "seeding failed"
[ "$(json_field listed <"$TMP/seed.json")" = $N ] || fail "seed listed $(json_field listed <"$TMP/seed.json")"

# The peer's own quirk, as awscli sees it: prefixes missing at the top.
awsp src s3api list-objects-v2 --bucket bkt --delimiter / --output json >"$TMP/top.json"
/usr/bin/python3 - "$TMP/top.json" <<'PY' || fail "s3rver reports every prefix now: this test no longer shows its quirk"
import json, sys
got = {p["Prefix"] for p in json.load(open(sys.argv[1])).get("CommonPrefixes", [])}
assert "deep/" not in got and "dir a/" not in got, got
PY

# summary_is FILE LISTED TRANSFERRED SKIPPED
summary_is() {
  /usr/bin/python3 - "$@" <<'PY' || fail "summary of $1: $(tail -1 "$1")"
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
want = [int(x) for x in sys.argv[2:5]]
assert s["state"] == "completed", s
assert [s["listed"], s["transferred"], s["skipped"]] == want, (s, want)
assert s["failed"] == 0, s
PY
}
same_buckets() {  # same_buckets DST_BUCKET: src bkt and dst DST_BUCKET, key size etag
  bucket_listing src >"$TMP/la"
  awsp dst s3api list-objects-v2 --bucket "$1" --output json |
    /usr/bin/python3 -c "import json,sys; [print(o['Key'], o['Size'], o['ETag']) for o in sorted(json.load(sys.stdin).get('Contents', []), key=lambda o: o['Key'])]" >"$TMP/lb"
  [ "$(wc -l <"$TMP/lb")" = "$(wc -l <"$TMP/la")" ] || fail "$1 has $(wc -l <"$TMP/lb") objects, the source $(wc -l <"$TMP/la")"
  diff "$TMP/la" "$TMP/lb" >/dev/null || fail "$1 differs: $(diff "$TMP/la" "$TMP/lb" | head -3)"
}

# 1. Default settings.
"${M[@]}" s3://bkt s3://bkt --src-profile src --dst-profile dst --json >"$TMP/run.json" 2>"$TMP/run.err" ||
  fail "migrate failed: $(tail -2 "$TMP/run.err")"
summary_is "$TMP/run.json" $N $N 0
grep -q warning "$TMP/run.err" && fail "unexpected warning: $(grep warning "$TMP/run.err")"
same_buckets bkt
# Run again: everything is there already.
"${M[@]}" s3://bkt s3://bkt --src-profile src --dst-profile dst --json >"$TMP/again.json" 2>"$TMP/again.err" ||
  fail "second run failed: $(tail -2 "$TMP/again.err")"
summary_is "$TMP/again.json" $N 0 $N

# 2. The worker pool: three workers share the job.
awsp dst s3 mb s3://pool >/dev/null
"${M[@]}" s3://bkt s3://pool --src-profile src --dst-profile dst --detach --json >"$TMP/job.json" ||
  fail "--detach failed"
JOB=$(json_field job <"$TMP/job.json")
W=("$FERRY" worker --state "$STATE" --once --json --poll-ms 100)
pids=()
for i in 1 2 3; do "${W[@]}" >"$TMP/w$i.out" 2>"$TMP/w$i.err" & pids+=($!); done
for p in "${pids[@]}"; do wait "$p" || fail "a worker failed: $(tail -2 "$TMP"/w*.err)"; done
"${M[@]}" status "$JOB" --json >"$TMP/pool.json"
/usr/bin/python3 - "$TMP/pool.json" $N <<'PY' || fail "pool job: $(cat "$TMP/pool.json")"
import json, sys
j = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
assert j["state"] == "completed" and j["listed"] == n and j["transferred"] + j["skipped"] == n, j
assert j["failed"] == 0, j
PY
same_buckets pool

# 3. The listing killed mid-way (after its 9th committed page of 50 keys),
# then resumed.
awsp dst s3 mb s3://resumed >/dev/null
rc=0
FERRY_CRASH_AT=list-page:9 "${M[@]}" s3://bkt s3://resumed --src-profile src --dst-profile dst --json --list-chunk 50 \
  >"$TMP/crash.json" 2>"$TMP/crash.err" || rc=$?
[ $rc = 137 ] || fail "the listing should have died by SIGKILL, exit $rc"
JOB=$(head -1 "$TMP/crash.json" | json_field job)
"${M[@]}" resume "$JOB" --json >"$TMP/resume.json" 2>"$TMP/resume.err" || fail "resume failed: $(tail -2 "$TMP/resume.err")"
/usr/bin/python3 - "$TMP/resume.json" $N <<'PY' || fail "resumed job: $(tail -1 "$TMP/resume.json")"
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
n = int(sys.argv[2])
assert s["state"] == "completed" and s["listed"] == n and s["transferred"] + s["skipped"] == n, s
PY
same_buckets resumed

# 4. A bucket where s3rver's walk order shows: "k/1" comes before "k-1" and
# "k.txt". Detected on the first page, listed flat, nothing lost.
awsp src s3 mb s3://mix >/dev/null
awsp dst s3 mb s3://mix >/dev/null
mkdir -p "$TMP/mix/k" "$TMP/mix/z"
for i in $(seq 1 40); do echo "$i" >"$TMP/mix/k/$i"; echo "$i" >"$TMP/mix/z/$i"; done
echo a >"$TMP/mix/k-1"; echo b >"$TMP/mix/k.txt"; echo c >"$TMP/mix/k0"
"${M[@]}" "$TMP/mix" s3://mix/ --dst-profile src -q || fail "seeding mix failed"
"${M[@]}" s3://mix s3://mix --src-profile src --dst-profile dst --json >"$TMP/mix.json" 2>"$TMP/mix.err" ||
  fail "mix failed: $(tail -2 "$TMP/mix.err")"
summary_is "$TMP/mix.json" 83 83 0
grep -q "warning: s3://mix: .*byte order.*one flat listing" "$TMP/mix.err" ||
  fail "no warning about the listing order: $(cat "$TMP/mix.err")"
[ "$(grep -c warning "$TMP/mix.err")" = 1 ] || fail "the warning is not one line: $(cat "$TMP/mix.err")"
echo "migrate_listing_s3rver_test: ok"
