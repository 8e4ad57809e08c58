#!/usr/bin/env bash
# `ferry migrate SRC DST --serve HOST:PORT`: one process runs the job and a
# gateway in front of it. While the job runs (a slow destination), reads
# through the gateway get every object whole, copied on demand or from the
# destination; the job completes with each object counted and stored once;
# (SQLite state: the gateway has its own connection beside the job's; opening
# it once dropped the job's file locks, and other processes stopped seeing
# the job's commits: `migrate status` here said "running" forever.)
# After it, the same process serves the destination alone until SIGINT, and
# exits with the job's code. Bad flag combinations are one line each.
source "$(dirname "$0")/lib.sh"
need curl
[ -x "$AWS" ] || skip "awscli not installed"

start_migrate_pair
N=400
seed_source $N 8 4096
printf 'gwkey gwsecret\n' >"$TMP/gw.keys"

for bad in "--detach" "--verify" "--serve-bucket x"; do
  [ "$bad" = "--serve-bucket x" ] && creds=() || creds=(--serve-credentials "$TMP/gw.keys")
  out=$("${M[@]}" s3://bkt s3://bkt --src-profile src --dst-profile dst --serve 127.0.0.1:0 \
    "${creds[@]}" $bad 2>&1) && fail "--serve with $bad was accepted"
  [ "$(wc -l <<<"$out")" = 1 ] || fail "--serve with $bad: $out"
done

curl -sf -XPOST "$B_URL/_admin/faults" -d '{"latency_ms": 15}' >/dev/null
"${M[@]}" s3://bkt s3://bkt --src-profile src --dst-profile dst --concurrency 2 --json \
  --serve 127.0.0.1:0 --serve-port-file "$TMP/gw.port" --serve-credentials "$TMP/gw.keys" \
  >"$TMP/run.out" 2>"$TMP/run.err" &
RUN=$!
PIDS+=($RUN)
for _ in $(seq 1 100); do [ -s "$TMP/gw.port" ] && break; sleep 0.1; done
[ -s "$TMP/gw.port" ] || { cat "$TMP/run.err" >&2; fail "the gateway did not start"; }
GW_URL="http://127.0.0.1:$(cat "$TMP/gw.port")"
JOB=$(head -1 "$TMP/run.out" | json_field job)
metric() { curl -sf "$GW_URL/_ferry/metrics" | awk -v n="$1${2:-}" '$1 == n {print $2; exit}'; }
get() {  # get KEY OUT: through the gateway; prints its x-ferry-answer
  curl -sf --aws-sigv4 aws:amz:us-east-1:s3 --user gwkey:gwsecret -o "$2" -D - "$GW_URL/bkt/$1" |
    tr -d '\r' | awk -F': ' 'tolower($1) == "x-ferry-answer" {print $2}'
}

# While the job runs: the last keys it will reach, read now, are copied on demand.
mapfile -t KEYS < <(cd "$TMP/src" && find . -type f -printf '%P\n' | sort -r | head -20)
answers=""
for k in "${KEYS[@]}"; do
  answers+="$(get "$k" "$TMP/out")
"
  same_bytes "$TMP/src/$k" "$TMP/out"
done
[ "$("${M[@]}" status "$JOB" --json | json_field state)" = running ] ||
  fail "the job was over before the reads (too fast a destination for this test)"
grep -q on_demand <<<"$answers" || fail "no read was copied on demand: $(sort <<<"$answers" | uniq -c)"
echo "during the job: $(sort <<<"$answers" | uniq -c | tr -s ' \n' ' ')"

for _ in $(seq 1 600); do
  [ "$("${M[@]}" status "$JOB" --json | json_field state)" = completed ] && break
  sleep 0.1
done
"${M[@]}" status "$JOB" --json >"$TMP/status.json"
[ "$(json_field state <"$TMP/status.json")" = completed ] || fail "job: $(cat "$TMP/status.json")"
copied=$(metric ferry_gateway_on_demand_copies_total)
/usr/bin/python3 - "$TMP/status.json" "$N" "$copied" <<'PY' || fail "counters: $(cat "$TMP/status.json")"
import json, sys
c = json.load(open(sys.argv[1]))
n, copied = int(sys.argv[2]), int(sys.argv[3])
assert c["listed"] == n, c
# The gateway's copies are the job's transfers too: counted once, by whoever copied.
assert c["transferred"] == n and c["skipped"] == 0 and c["failed"] == 0, c
assert copied > 0, copied
PY
puts=$(( $(stat_of "$B_URL" put requests) - $(stat_of "$B_URL" put errors) ))
[ "$puts" = "$N" ] || fail "the destination stored $puts objects for $N keys"
kill -0 $RUN 2>/dev/null || fail "the process ended with the job: $(cat "$TMP/run.err")"
[ "$(get "${KEYS[0]}" "$TMP/after")" = destination ] || fail "after the job, not from the destination"
same_bytes "$TMP/src/${KEYS[0]}" "$TMP/after"
kill -INT $RUN
rc=0; wait $RUN || rc=$?
[ $rc = 0 ] || fail "exit $rc after the job completed and SIGINT: $(tail -3 "$TMP/run.err")"
grep -q "serves bucket bkt" "$TMP/run.err" || fail "no word of serving on: $(tail -3 "$TMP/run.err")"
echo "migrate --serve: OK ($copied copied on demand)"
