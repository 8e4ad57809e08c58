#!/usr/bin/env bash
# `ferry server` over HTTP with curl: a job made with POST /v1/jobs (bearer
# token) is run by a `ferry worker` sharing the state to an exact summary
# and an equal tree; the job, the list and the dead letters read back; the
# job verified with POST /v1/verify, and, after a file of its destination
# is deleted, fixed (the key requeued, a worker copies it again); an
# S3 job with a dead letter (403 at the destination) retried with
# POST /v1/jobs/ID/dlq/retry and finished by a worker; a server with
# --run-jobs finishing a job alone; a
# missing or wrong token, bad JSON, a bad option, an unknown job and an
# oversized body each get their JSON error; the OpenAPI document is served.
source "$(dirname "$0")/lib.sh"
need curl

make_objects "$TMP/lsrc" 300 6 4096
STATE="$TMP/state"
printf '# test tokens\nsecret-one\nsecret-two\n' >"$TMP/tokens"
"$FERRY" server --state "$STATE" --listen 127.0.0.1:0 --port-file "$TMP/port" --tokens "$TMP/tokens" \
  >"$TMP/server.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$TMP/port" ] && break; sleep 0.1; done
[ -s "$TMP/port" ] || fail "server did not start: $(cat "$TMP/server.log")"
API="http://127.0.0.1:$(cat "$TMP/port")"
api() {  # api METHOD PATH [BODY] [TOKEN]: prints STATUS BODY
  local m=$1 p=$2 body=${3:-} tok=${4-secret-two}
  local args=(-s -o "$TMP/resp" -w '%{http_code}' -X "$m")
  [ -n "$tok" ] && args+=(-H "Authorization: Bearer $tok")
  [ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
  echo "$(curl "${args[@]}" "$API$p") $(cat "$TMP/resp")"
}
code_of() { /usr/bin/python3 -c "import json,sys; print(json.loads(sys.stdin.read().split(' ',1)[1])['error']['code'])"; }

out=$(api POST /v1/jobs "{\"src\": \"$TMP/lsrc\", \"dst\": \"$TMP/ldst\", \"options\": {\"concurrency\": 8}}")
[ "${out%% *}" = 201 ] || fail "POST /v1/jobs: $out"
JOB=$(echo "${out#* }" | json_field job)
"$FERRY" worker --state "$STATE" --once --json >"$TMP/worker.out" 2>&1 || fail "worker: $(tail -3 "$TMP/worker.out")"
out=$(api GET "/v1/jobs/$JOB")
echo "${out#* }" | /usr/bin/python3 -c "
import json, sys
j = json.load(sys.stdin)
assert j['state'] == 'completed' and j['listed'] == 300 and j['transferred'] == 300 and j['failed'] == 0, j
" || fail "job after the worker: $out"
[ "$(tree_digest "$TMP/lsrc")" = "$(tree_digest "$TMP/ldst")" ] || fail "destination differs from source"
out=$(api GET "/v1/jobs?all=true")
echo "${out#* }" | grep -q "\"job\":\"$JOB\"" || fail "list: $out"
out=$(api GET "/v1/jobs/$JOB/dlq")
[ "${out%% *}" = 200 ] || fail "dlq: $out"
# POST /v1/verify: the job's destination checked, then fixed after a loss.
verify_wait() {  # verify_wait BODY: the finished check's JSON
  local id i out
  out=$(api POST /v1/verify "$1")
  [ "${out%% *}" = 202 ] || fail "POST /v1/verify: $out"
  id=$(echo "${out#* }" | json_field verify)
  for i in $(seq 1 100); do
    out=$(api GET "/v1/verify/$id")
    [ "$(echo "${out#* }" | json_field state)" != running ] && break
    sleep 0.1
  done
  echo "${out#* }"
}
verify_wait "{\"job\": \"$JOB\"}" | /usr/bin/python3 -c "
import json, sys
v = json.load(sys.stdin)
assert v['state'] == 'done' and v['ok'] is True and v['counts']['matched'] == 300, v
" || fail "verify of the job"
victim=$(cd "$TMP/ldst" && find . -type f ! -name '.*' | sort | head -1)
rm "$TMP/ldst/$victim"
verify_wait "{\"job\": \"$JOB\", \"fix\": true}" | /usr/bin/python3 -c "
import json, sys
v = json.load(sys.stdin)
assert v['state'] == 'done' and v['ok'] is False and v['requeued'] == 1 and len(v['differences']) == 1, v
" || fail "verify --fix of the job: $(api GET /v1/jobs/$JOB)"
"$FERRY" worker --state "$STATE" --once --json >"$TMP/worker-fix.out" 2>&1 || fail "worker after the fix: $(tail -2 "$TMP/worker-fix.out")"
[ "$(tree_digest "$TMP/lsrc")" = "$(tree_digest "$TMP/ldst")" ] || fail "destination not repaired by the fix"
out=$(api GET /v1/openapi.json)
[ "${out%% *}" = 200 ] && grep -q '"openapi": "3.0.3"' "$TMP/resp" || fail "openapi: ${out:0:200}"

out=$(api GET /metrics)
[ "${out%% *}" = 200 ] && grep -q '^ferry_server_responses_total{status="201"} 1$' "$TMP/resp" ||
  fail "metrics: $(head -c 300 "$TMP/resp")"
if command -v promtool >/dev/null; then
  promtool check metrics <"$TMP/resp" >"$TMP/lint" 2>&1 || fail "promtool: $(cat "$TMP/lint")"
fi

# --- a dead letter, retried over the API ------------------------------------------------
start_migrate_pair
seed_source 40 4 1024
curl -sf -XPOST "$B_URL/_admin/faults" -d '{"kind": "403", "key_regex": "d01/o00005$", "op": "put"}' >/dev/null
"$FERRY" server --state "$STATE" --listen 127.0.0.1:0 --port-file "$TMP/port2" >"$TMP/server2.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$TMP/port2" ] && break; sleep 0.1; done
API2="http://127.0.0.1:$(cat "$TMP/port2")"
post2() { curl -s -X POST -H 'Content-Type: application/json' ${2:+--data-binary "$2"} "$API2$1"; }
JOB2=$(post2 /v1/jobs '{"src": "s3://bkt", "dst": "s3://bkt", "options": {"src-profile": "src", "dst-profile": "dst"}}' | json_field job)
"$FERRY" worker --state "$STATE" --once --json >"$TMP/worker2.out" 2>&1 || true
curl -s "$API2/v1/jobs/$JOB2/dlq" | grep -q 'd01/o00005' || fail "no dead letter: $(curl -s "$API2/v1/jobs/$JOB2/dlq")"
[ "$(curl -s "$API2/v1/jobs/$JOB2" | json_field state)" = failed ] || fail "job with a dead letter not failed"
curl -sf -XPOST "$B_URL/_admin/faults" -d '{}' >/dev/null
[ "$(post2 "/v1/jobs/$JOB2/dlq/retry" | json_field requeued)" = 1 ] || fail "dlq/retry did not requeue one key"
"$FERRY" worker --state "$STATE" --once --json >"$TMP/worker3.out" 2>&1 || fail "worker after retry: $(tail -2 "$TMP/worker3.out")"
curl -s "$API2/v1/jobs/$JOB2" | /usr/bin/python3 -c "
import json, sys
j = json.load(sys.stdin)
assert j['state'] == 'completed' and j['failed'] == 0 and j['transferred'] == 40, j
" || fail "after the retry: $(curl -s "$API2/v1/jobs/$JOB2")"
bucket_listing src >"$TMP/la"; bucket_listing dst >"$TMP/lb"
diff "$TMP/la" "$TMP/lb" >/dev/null || fail "destination differs after the retry"

# --- a server that runs its jobs itself (--run-jobs) ---------------------------------------
make_objects "$TMP/rsrc" 120 3 2048
"$FERRY" server --state "$TMP/state3" --listen 127.0.0.1:0 --port-file "$TMP/port3" --run-jobs 2 \
  >"$TMP/server3.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$TMP/port3" ] && break; sleep 0.1; done
API3="http://127.0.0.1:$(cat "$TMP/port3")"
JOB3=$(curl -s -X POST --data-binary "{\"src\": \"$TMP/rsrc\", \"dst\": \"$TMP/rdst\"}" "$API3/v1/jobs" | json_field job)
for _ in $(seq 1 100); do
  [ "$(curl -s "$API3/v1/jobs/$JOB3" | json_field state)" = completed ] && break
  sleep 0.1
done
[ "$(curl -s "$API3/v1/jobs/$JOB3" | json_field state)" = completed ] || fail "--run-jobs: $(curl -s "$API3/v1/jobs/$JOB3")"
[ "$(tree_digest "$TMP/rsrc")" = "$(tree_digest "$TMP/rdst")" ] || fail "--run-jobs: trees differ"

# --- errors, each as JSON with its code -----------------------------------------------
[ "$(api GET /v1/jobs "" "" | code_of)" = unauthorized ] || fail "no token accepted"
[ "$(api GET /v1/jobs "" "secret-three" | code_of)" = unauthorized ] || fail "a wrong token accepted"
[ "$(api POST /v1/jobs "{not json" | code_of)" = invalid_argument ] || fail "bad JSON"
[ "$(api POST /v1/jobs "{\"src\": \"$TMP/lsrc\", \"dst\": \"$TMP/x\", \"options\": {\"concurrency\": -1}}" | code_of)" = invalid_argument ] ||
  fail "bad option"
[ "$(api GET /v1/jobs/nosuchjob | code_of)" = not_found ] || fail "unknown job"
head -c 100000 /dev/zero | tr '\0' x >"$TMP/big"
out=$(curl -s -w ' %{http_code}' -X POST -H "Authorization: Bearer secret-one" --data-binary @"$TMP/big" "$API/v1/jobs")
[ "${out##* }" = 413 ] || fail "oversized body: ${out##* }"
grep -q "secret-" "$TMP/server.log" && fail "a token was logged"

# --- a tokens file that cannot be used: one line, no server ----------------------------
: >"$TMP/empty-tokens"
set +e
"$FERRY" server --state "$STATE" --listen 127.0.0.1:0 --tokens "$TMP/empty-tokens" >"$TMP/bad.out" 2>&1
rc=$?
set -e
[ "$rc" != 0 ] && [ "$(wc -l <"$TMP/bad.out")" = 1 ] && grep -q "no token" "$TMP/bad.out" ||
  fail "empty tokens file: rc $rc: $(cat "$TMP/bad.out")"
echo "server api: OK"
