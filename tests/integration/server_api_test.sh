#!/usr/bin/env bash
# `ferry server` over HTTP with curl: a job made with POST /v1/jobs (bearer
# token) is run by a `ferry worker` sharing the state to an exact summary
# and an equal tree; the job, the list and the dead letters read back; a
# missing or wrong token, bad JSON, a bad option, an unknown job and an
# oversized body each get their JSON error; the OpenAPI document is served.
source "$(dirname "$0")/lib.sh"
need curl

make_objects "$TMP/src" 300 6 4096
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

out=$(api POST /v1/jobs "{\"src\": \"$TMP/src\", \"dst\": \"$TMP/dst\", \"options\": {\"concurrency\": 8}}")
[ "${out%% *}" = 201 ] || fail "POST /v1/jobs: $out"
JOB=$(echo "${out#* }" | json_field job)
"$FERRY" worker --state "$STATE" --once --json >"$TMP/worker.out" 2>&1 || fail "worker: $(tail -3 "$TMP/worker.out")"
out=$(api GET "/v1/jobs/$JOB")
echo "${out#* }" | /usr/bin/python3 -c "
import json, sys
j = json.load(sys.stdin)
assert j['state'] == 'completed' and j['listed'] == 300 and j['transferred'] == 300 and j['failed'] == 0, j
" || fail "job after the worker: $out"
[ "$(tree_digest "$TMP/src")" = "$(tree_digest "$TMP/dst")" ] || fail "destination differs from source"
out=$(api GET "/v1/jobs?all=true")
echo "${out#* }" | grep -q "\"job\":\"$JOB\"" || fail "list: $out"
out=$(api GET "/v1/jobs/$JOB/dlq")
[ "${out%% *}" = 200 ] || fail "dlq: $out"
out=$(api GET /v1/openapi.json)
[ "${out%% *}" = 200 ] && grep -q '"openapi": "3.0.3"' "$TMP/resp" || fail "openapi: ${out:0:200}"

# --- errors, each as JSON with its code -----------------------------------------------
[ "$(api GET /v1/jobs "" "" | code_of)" = unauthorized ] || fail "no token accepted"
[ "$(api GET /v1/jobs "" "secret-three" | code_of)" = unauthorized ] || fail "a wrong token accepted"
[ "$(api POST /v1/jobs "{not json" | code_of)" = invalid_argument ] || fail "bad JSON"
[ "$(api POST /v1/jobs "{\"src\": \"$TMP/src\", \"dst\": \"$TMP/x\", \"options\": {\"concurrency\": -1}}" | code_of)" = invalid_argument ] ||
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
