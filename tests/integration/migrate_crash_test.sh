#!/usr/bin/env bash
# Crash and resume: a 20,000-object migration between two test servers, with
# 503s injected at the destination, is killed with SIGKILL at fixed points
# (mid-listing, mid-batch, after an object was written but before it was
# recorded, mid-multipart). `ferry migrate resume` finishes it; then the
# destination equals the source (keys, sizes, bytes, metadata), the summary
# is exact, and the destination's counters show that no object was uploaded
# to completion twice.
source "$(dirname "$0")/lib.sh"
need curl

start_migrate_pair

# 20,000 small objects in 50 directories, plus 3 objects of 12 MiB (3 parts
# of 5 MiB, 5 MiB and 2 MiB each).
SRC="$TMP/src"
/usr/bin/python3 - "$SRC" <<'PY'
import os, random, sys
root = sys.argv[1]
r = random.Random(20000)
for i in range(20000):
    d = os.path.join(root, f"d{i % 50:02d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"obj{i:05d}"), "wb") as f:
        f.write(r.randbytes(r.randint(0, 2048)))
os.makedirs(os.path.join(root, "zbig"), exist_ok=True)
for i in range(3):
    with open(os.path.join(root, "zbig", f"b{i}"), "wb") as f:
        f.write(r.randbytes(12 << 20))
PY
TOTAL=20003
"${M[@]}" "$SRC" s3://bkt/ --dst-profile src --json --multipart-threshold 100M >"$TMP/seed.json" ||
  fail "seeding the source failed"
[ "$(json_field listed <"$TMP/seed.json")" = $TOTAL ] || fail "seed listed $(json_field listed <"$TMP/seed.json")"
# Give the big ones metadata to carry.
for i in 0 1 2; do
  awsp src s3api copy-object --bucket bkt --key "zbig/b$i" --copy-source "bkt/zbig/b$i" \
    --metadata-directive REPLACE --content-type application/x-test --metadata "n=$i" >/dev/null
done

curl -sf -XPOST "$B_URL/_admin/faults" -d '{"kind":"503","every":97}' >/dev/null
MP=(--multipart-threshold 8M --part-size 5M --part-concurrency 2 --concurrency 32 --list-concurrency 1)

# crash NAME POINT [ferry args...]: runs until the crash point kills it.
crash() {
  local name=$1 point=$2; shift 2
  local rc=0
  FERRY_CRASH_AT="$point" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
  [ $rc = 137 ] || fail "$name: expected death by SIGKILL at $point, got exit $rc: $(tail -2 "$TMP/$name.err")"
}

# 1. Mid-listing: after the 5th committed page (5,000 of 20,003 keys).
crash list "list-page:5" "${M[@]}" s3://bkt s3://bkt/ --src-profile src --dst-profile dst "${MP[@]}" --json
JOB=$(head -1 "$TMP/list.out" | json_field job)
"${M[@]}" status "$JOB" --json >"$TMP/s1.json"
listed=$(json_field listed <"$TMP/s1.json")
[ "$listed" -ge 5000 ] && [ "$listed" -lt $TOTAL ] || fail "after a mid-listing crash listed=$listed"
# 2. Mid-batch: after the 3rd group commit of finished objects.
crash batch "finish:3" "${M[@]}" resume "$JOB" --json
# 3. Between writing objects and recording them (the last guard's case).
crash written "transfer:400" "${M[@]}" resume "$JOB" --json
# 3b. Between creating a multipart upload and saving its id: the upload is
# open at the destination and only an intent is recorded. The next resume
# must find it and abort it (checked at the end: no upload is left open).
crash created "multipart-created:1" "${M[@]}" resume "$JOB" --json
uploads_open() { curl -sf "$B_URL/_admin/stats" | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['storage']['multipart_uploads'])"; }
[ "$(uploads_open)" -ge 1 ] || fail "the crash after a create left no upload open"
intents=$(state_sql "select count(*) from uploads where job='$JOB' and upload_id=''")
[ "$intents" -ge 1 ] || fail "no intent recorded for the upload the crash left"
# 4. Mid-multipart: after the 2nd part of this run was recorded.
crash part "part:2" "${M[@]}" resume "$JOB" --json
# What resuming the multipart objects must still upload: 3 parts for each
# big object not yet at the destination, less the parts recorded for it.
needed=0
for i in 0 1 2; do
  if ! awsp dst s3api head-object --bucket bkt --key "zbig/b$i" >/dev/null 2>&1; then
    have=$(state_sql "select count(*) from parts where job='$JOB' and key='zbig/b$i'")
    needed=$((needed + 3 - have))
  fi
done
parts_before=$(( $(stat_of "$B_URL" upload-part requests) - $(stat_of "$B_URL" upload-part errors) ))
"${M[@]}" status "$JOB" --json >"$TMP/s4.json"
/usr/bin/python3 - "$TMP/s4.json" <<'PY' || fail "job state after the crashes: $(cat "$TMP/s4.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["state"] in ("running", "interrupted"), j
assert j["transferred"] + j["skipped"] < 20003, j
PY
# 5. Resume to the end.
"${M[@]}" resume "$JOB" --json >"$TMP/final.json" 2>"$TMP/final.err" ||
  fail "final resume failed: $(tail -3 "$TMP/final.err")"
/usr/bin/python3 - "$TMP/final.json" $TOTAL <<'PY' || fail "summary not exact: $(tail -1 "$TMP/final.json")"
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
total = int(sys.argv[2])
assert s["state"] == "completed", s
assert s["listed"] == total, s
assert s["failed"] == 0, s
assert s["transferred"] + s["skipped"] == total, s
PY
curl -sf -XPOST "$B_URL/_admin/faults" -d '{}' >/dev/null

# The destination equals the source: keys, sizes and ETags (single-part
# objects), and the multipart ones byte for byte with their metadata.
list_all() {
  awsp "$1" s3api list-objects-v2 --bucket bkt --output json |
    /usr/bin/python3 -c "
import json,sys
for o in sorted(json.load(sys.stdin)['Contents'], key=lambda o: o['Key']):
    e = o['ETag'].strip('\"')
    print(o['Key'], o['Size'], e if '-' not in e and not o['Key'].startswith('zbig/') else '-')"
}
list_all src >"$TMP/la"; list_all dst >"$TMP/lb"
[ "$(wc -l <"$TMP/lb")" = $TOTAL ] || fail "destination has $(wc -l <"$TMP/lb") objects"
diff "$TMP/la" "$TMP/lb" >/dev/null || fail "destination differs: $(diff "$TMP/la" "$TMP/lb" | head -5)"
for i in 0 1 2; do
  awsp dst s3api get-object --bucket bkt --key "zbig/b$i" "$TMP/b$i" >"$TMP/h$i.json"
  same_bytes "$SRC/zbig/b$i" "$TMP/b$i"
  grep -q '"ContentType": "application/x-test"' "$TMP/h$i.json" || fail "zbig/b$i lost its Content-Type"
  grep -q "\"n\": \"$i\"" "$TMP/h$i.json" || fail "zbig/b$i lost its metadata"
done

# No object uploaded to completion twice: successful PUTs are exactly the
# small objects, successful Completes exactly the 3 multipart ones, and no
# upload is left open.
puts=$(( $(stat_of "$B_URL" put requests) - $(stat_of "$B_URL" put errors) ))
completes=$(( $(stat_of "$B_URL" complete requests) - $(stat_of "$B_URL" complete errors) ))
[ "$puts" = 20000 ] || fail "$puts successful PUTs for 20,000 small objects"
[ "$completes" = 3 ] || fail "$completes successful multipart completes for 3 objects"
open=$(uploads_open)
[ "$open" = 0 ] || fail "$open multipart uploads left open"
# The crashed multipart uploads were resumed, not restarted: the last run
# uploaded exactly the parts that had not been recorded.
parts_ok=$(( $(stat_of "$B_URL" upload-part requests) - $(stat_of "$B_URL" upload-part errors) ))
[ $((parts_ok - parts_before)) = "$needed" ] ||
  fail "the last run uploaded $((parts_ok - parts_before)) parts; $needed were missing"
# The state store kept nothing per object.
rows=$(state_sql "select (select count(*) from objects) + (select count(*) from uploads) + (select count(*) from parts) + (select count(*) from dlq) + (select count(*) from shards)")
[ "$rows" = 0 ] || fail "$rows rows left in the state store"
echo "migrate_crash_test: ok ($puts puts, $completes completes, $parts_ok parts)"
