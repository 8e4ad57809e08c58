#!/usr/bin/env bash
# PostgreSQL goes away mid-job: a 6,000-object migration between two test
# servers keeps its state in a PostgreSQL cluster of its own, which is shut
# down for 3 s while objects are in flight and then started again. The run
# pauses its state writes (the state circuit opens), keeps the results it
# could not commit, and goes on when the server is back: the job completes
# with an exact summary, the destination equals the source, and no object
# was uploaded twice (the destination's PUT counter).
source "$(dirname "$0")/lib.sh"
need curl
need psql

start_own_pg
stop_pg() { "$CLUSTER" stop "$TMP/pg" || true; }

N=6000
seed_source $N 20 4096

# About 15 s of transfers: 8 at a time, 20 ms per destination request.
curl -sf -XPOST "$B_URL/_admin/faults" -d '{"latency_ms":20}' >/dev/null
"${M[@]}" s3://bkt s3://bkt --src-profile src --dst-profile dst --concurrency 8 --json \
  >"$TMP/run.json" 2>"$TMP/run.err" &
RUN=$!
# Wait until objects are moving, then take the server away for 3 s.
for _ in $(seq 1 200); do
  done_now=$(state_sql "select coalesce(sum(transferred), 0) from jobs where src = 's3://bkt'" 2>/dev/null || echo 0)
  [ "${done_now:-0}" -ge 500 ] && break
  sleep 0.1
done
[ "${done_now:-0}" -ge 500 ] || fail "the job did not get going"
stop_pg
sleep 3
"$CLUSTER" restart "$TMP/pg" >/dev/null || fail "the PostgreSQL cluster did not come back"
wait $RUN || fail "the job failed after the outage: $(tail -3 "$TMP/run.err")"

grep -q '"event":"circuit"' "$TMP/run.json" || fail "the outage was not reported as an open circuit"
/usr/bin/python3 - "$TMP/run.json" $N <<'PY' || fail "summary not exact: $(tail -1 "$TMP/run.json")"
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
n = int(sys.argv[2])
assert s["event"] == "summary", s
assert s["state"] == "completed", s
assert s["listed"] == n and s["transferred"] == n and s["skipped"] == 0 and s["failed"] == 0, s
PY
bucket_listing src >"$TMP/la"; bucket_listing dst >"$TMP/lb"
[ "$(wc -l <"$TMP/lb")" = $N ] || fail "destination has $(wc -l <"$TMP/lb") objects"
diff "$TMP/la" "$TMP/lb" >/dev/null || fail "destination differs: $(diff "$TMP/la" "$TMP/lb" | head -5)"
puts=$(( $(stat_of "$B_URL" put requests) - $(stat_of "$B_URL" put errors) ))
[ "$puts" = $N ] || fail "$puts successful PUTs for $N objects"
rows=$(state_sql "select (select count(*) from objects) + (select count(*) from uploads) + (select count(*) from parts) + (select count(*) from dlq)")
[ "$rows" = 0 ] || fail "$rows rows left in the state store"
echo "migrate_pg_restart_test: ok ($puts puts; $(grep -c '"event":"circuit"' "$TMP/run.json") circuit events)"
