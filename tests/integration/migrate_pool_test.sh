#!/usr/bin/env bash
# The worker pool: three `ferry worker` processes share one 20,000-object job
# (`ferry migrate --detach`) between two test servers, with 503s injected at
# the destination. The first worker takes the listing and is killed with
# SIGKILL after its 5th committed page; the other two joined it and
# transfer meanwhile, and one of them takes the listing over once the dead
# one's lease lapses. The second is killed with SIGKILL mid-job, between
# writing an object and recording it. The third finishes the job: it
# completes, the summary is exact, the destination equals the source, and
# no object was uploaded to completion twice (the destination's counters).
# Runs on the SQLite state (several processes on one file) and, with
# FERRY_TEST_STATE=pg, on PostgreSQL.
source "$(dirname "$0")/lib.sh"
need curl

start_migrate_pair
N=20000
seed_source $N 40 2048
curl -sf -XPOST "$B_URL/_admin/faults" -d '{"kind":"503","every":97}' >/dev/null

# The job, for the pool: nothing runs it yet.
"${M[@]}" s3://bkt s3://bkt --src-profile src --dst-profile dst --detach --json \
  --concurrency 16 --list-concurrency 1 >"$TMP/job.json" || fail "--detach failed"
JOB=$(json_field job <"$TMP/job.json")
[ "$("${M[@]}" status "$JOB" --json | json_field state)" = created ] || fail "a detached job ran"

W=("$FERRY" worker --state "$STATE" --once --lease 3s --json --poll-ms 100)
FERRY_CRASH_AT=list-page:5 "${W[@]}" >"$TMP/w1.out" 2>"$TMP/w1.err" &
W1=$!
for _ in $(seq 1 100); do
  [ "$("${M[@]}" status "$JOB" --json | json_field state)" = running ] && break
  sleep 0.1
done
FERRY_CRASH_AT=transfer:3000 "${W[@]}" >"$TMP/w2.out" 2>"$TMP/w2.err" &
W2=$!
"${W[@]}" >"$TMP/w3.out" 2>"$TMP/w3.err" &
W3=$!

rc=0; wait $W1 || rc=$?
[ $rc = 137 ] || fail "worker 1 should die by SIGKILL mid-listing, exit $rc: $(tail -2 "$TMP/w1.err")"
rc=0; wait $W2 || rc=$?
[ $rc = 137 ] || fail "worker 2 should die by SIGKILL mid-job, exit $rc: $(tail -2 "$TMP/w2.err")"
rc=0; wait $W3 || rc=$?
[ $rc = 0 ] || fail "worker 3 did not finish the job, exit $rc: $(tail -3 "$TMP/w3.err")"
grep -q '"event":"summary"' "$TMP/w2.out" && fail "worker 2 finished before it was killed"
# Worker 3 was there from the start of the transfers: it moved objects
# while worker 1 listed and worker 2 transferred.
grep -q "\"job\":\"$JOB\"" "$TMP/w3.out" || fail "worker 3 never ran the job"

"${M[@]}" status "$JOB" --json >"$TMP/final.json"
/usr/bin/python3 - "$TMP/final.json" "$TMP/w3.out" $N <<'PY' || fail "summary not exact: $(cat "$TMP/final.json")"
import json, sys
j = json.load(open(sys.argv[1]))
n = int(sys.argv[3])
assert j["state"] == "completed", j
assert j["listed"] == n and j["failed"] == 0 and j["pending"] == 0, j
assert j["transferred"] + j["skipped"] == n, j
s = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
assert s["event"] == "summary" and s["state"] == "completed", s
assert (s["listed"], s["transferred"], s["skipped"]) == (j["listed"], j["transferred"], j["skipped"]), (s, j)
PY
curl -sf -XPOST "$B_URL/_admin/faults" -d '{}' >/dev/null

bucket_listing src >"$TMP/la"; bucket_listing dst >"$TMP/lb"
[ "$(wc -l <"$TMP/lb")" = $N ] || fail "destination has $(wc -l <"$TMP/lb") objects"
diff "$TMP/la" "$TMP/lb" >/dev/null || fail "destination differs: $(diff "$TMP/la" "$TMP/lb" | head -5)"
puts=$(( $(stat_of "$B_URL" put requests) - $(stat_of "$B_URL" put errors) ))
[ "$puts" = $N ] || fail "$puts successful PUTs for $N objects: an object was uploaded twice (or lost)"
skipped=$(json_field skipped <"$TMP/final.json")
[ "$skipped" -ge 1 ] || fail "no object was found already copied: the mid-job kill left nothing to take over"
rows=$(state_sql "select (select count(*) from objects) + (select count(*) from uploads) + (select count(*) from parts) + (select count(*) from dlq)")
[ "$rows" = 0 ] || fail "$rows rows left in the state store"
echo "migrate_pool_test: ok ($puts puts, $skipped found already copied after the kills)"
