#!/usr/bin/env bash
# `ferry worker --metrics`: a worker runs a detached 1,500-object job to a
# destination that answers slowly, fails one key's PUTs more times than a
# request retries (so the object is retried: the worker makes 3 attempts
# per request and the key fails 4 times, never the 5 failed requests in a
# row that open the destination's circuit, which would send the object
# back as an outage rather than retry it) and throttles the other keys
# now and then (not that one: a 503 on it sends it back without using up an
# attempt, as throttling is the endpoint's load, and no retry is counted).
# Scraped while the job runs, the metrics show it: the job's keys by state
# moving, a running job; scraped after, one completed run, the object
# retry, the state store's latency per operation as histograms, and the
# whole exposition passes promtool. A bad --metrics address is one line.
source "$(dirname "$0")/lib.sh"
need curl
need promtool

start_migrate_pair
N=1500
seed_source $N 30 2048
curl -sf -XPOST "$B_URL/_admin/faults" -d '{"latency_ms": 3, "rules": [
  {"kind": "500", "key_regex": "d07/o00007$", "op": "put", "count": 4},
  {"kind": "503", "key_regex": "^(?!d07/o00007$)", "op": "put", "probability": 0.01}]}' >/dev/null
"${M[@]}" s3://bkt s3://bkt --src-profile src --dst-profile dst --detach --json --concurrency 4 \
  >"$TMP/job.json" || fail "--detach failed"
JOB=$(json_field job <"$TMP/job.json")

PORT=$(free_port)
"$FERRY" worker --state "$STATE" --poll-ms 100 --json --retries 3 --metrics "127.0.0.1:$PORT" >"$TMP/w.out" 2>"$TMP/w.err" &
W=$!
PIDS+=($W)
wait_port "$PORT"
scrape() { curl -sf "http://127.0.0.1:$PORT/metrics"; }
value() { awk -v n="$1" '$1 == n { print $2 }' "$2"; }

# --- while it runs --------------------------------------------------------------------
seen=""
for _ in $(seq 1 200); do
  scrape >"$TMP/m1" || fail "no metrics while running"
  t=$(value "ferry_worker_job_objects{job=\"$JOB\",state=\"transferred\"}" "$TMP/m1")
  if [ "$(value ferry_worker_running_jobs "$TMP/m1")" = 1 ] && [ -n "$t" ] && [ "$t" -gt 0 ] && [ "$t" -lt $N ]; then
    seen=$t
    break
  fi
  sleep 0.05
done
[ -n "$seen" ] || fail "never saw the job mid-way: $(grep job_objects "$TMP/m1")"
echo "mid-job: $seen of $N transferred"

# --- after it ---------------------------------------------------------------------------
for _ in $(seq 1 600); do
  [ "$("${M[@]}" status "$JOB" --json | json_field state)" = completed ] && break
  sleep 0.1
done
[ "$("${M[@]}" status "$JOB" --json | json_field state)" = completed ] || fail "job did not complete"
for _ in $(seq 1 50); do
  scrape >"$TMP/m2"
  [ "$(value 'ferry_worker_runs_total{outcome="completed"}' "$TMP/m2")" = 1 ] && break
  sleep 0.1
done
[ "$(value 'ferry_worker_runs_total{outcome="completed"}' "$TMP/m2")" = 1 ] || fail "runs: $(grep runs_total "$TMP/m2")"
[ "$(value ferry_worker_running_jobs "$TMP/m2")" = 0 ] || fail "still running after the job"
[ "$(value ferry_worker_retries_total "$TMP/m2")" -ge 1 ] || fail "the failing key's retry was not counted"
claims=$(value 'ferry_worker_state_store_seconds_count{op="claim"}' "$TMP/m2")
[ -n "$claims" ] && [ "$claims" -gt 0 ] || fail "no state-store latency for claim: $(grep state_store "$TMP/m2" | head)"
[ "$(value 'ferry_worker_state_store_seconds_bucket{op="claim",le="+Inf"}' "$TMP/m2")" = "$claims" ] ||
  fail "claim histogram: +Inf bucket is not the count"
grep -q '^ferry_worker_circuit_state{dependency="destination",state="closed"} 1$' "$TMP/m2" ||
  fail "circuits: $(grep circuit "$TMP/m2")"
promtool check metrics <"$TMP/m2" >"$TMP/lint" 2>&1 || fail "promtool: $(cat "$TMP/lint")"
echo "after: $(grep -c '^# TYPE' "$TMP/m2") families pass promtool, $claims claims timed"

# --- a bad address --------------------------------------------------------------------
set +e
"$FERRY" worker --state "$STATE" --once --metrics "127.0.0.1:notaport" >"$TMP/bad.out" 2>&1
rc=$?
set -e
[ "$rc" != 0 ] && [ "$(wc -l <"$TMP/bad.out")" = 1 ] || fail "bad --metrics: rc $rc: $(cat "$TMP/bad.out")"
echo "worker metrics: OK"
