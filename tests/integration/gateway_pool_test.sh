#!/usr/bin/env bash
# Two gateways and three workers on one job, its state in PostgreSQL (the
# fixture's cluster; FERRY_TEST_STATE=pg): a 20,000-object job (`ferry
# migrate --detach`) between two test servers that log every request. Three
# `ferry worker` processes copy it while two `ferry gateway` processes serve
# it, and clients (gateway_pool_client.py) read, write and delete through
# both in turn. Gateway 1 is killed with SIGKILL mid-run; the clients go on
# through gateway 2, and its claims lapse to the others. At the end:
#  - the job completed with exact counters (listed = the source, nothing
#    failed or pending, transferred + skipped = listed);
#  - the destination equals the source minus the clients' deletes plus
#    their writes (every ETag compared), and every read matched;
#  - the servers' logs show one source GET and one destination PUT per
#    copied key (plus one PUT per client write); the keys read or written
#    twice are exactly ones gateway 1 held when it died (its claims, read
#    from the state right after the kill), each reported.
source "$(dirname "$0")/lib.sh"
need curl
need psql
[ "${FERRY_TEST_STATE:-}" = pg ] || skip "runs on PostgreSQL only (FERRY_TEST_STATE=pg)"

# 25 ms a request each way, as stores a region away: copies take long
# enough that the killed gateway dies holding some.
TEST_S3_LOG=$TMP/src-requests.log start_test_s3 -v --latency-ms 25; A_URL=$S3_URL
TEST_S3_LOG=$TMP/dst-requests.log start_test_s3 -v --latency-ms 25; B_URL=$S3_URL
add_profile src "$A_URL" "$TEST_KEY" "$TEST_SECRET"
add_profile dst "$B_URL" "$TEST_KEY" "$TEST_SECRET"
use_state
M=("$FERRY" migrate --state "$STATE")
N=20000
seed_source $N 40 2048  # PUTs to the source: no GET counted below

"${M[@]}" s3://bkt s3://bkt --src-profile src --dst-profile dst --detach --json \
  --concurrency 8 --list-concurrency 1 >"$TMP/job.json" || fail "--detach failed"
JOB=$(json_field job <"$TMP/job.json")
printf 'gwkey gwsecret\n' >"$TMP/gw.keys"
start_pool_gateway() {  # start_pool_gateway N: gateway N, GW<N>_URL and GW<N>_PID
  "$FERRY" gateway --job "$JOB" --state "$STATE" --listen 127.0.0.1:0 --port-file "$TMP/gw$1.port" \
    --credentials "$TMP/gw.keys" --lease 3 --busy-wait 20 >"$TMP/gw$1.log" 2>&1 &
  PIDS+=($!)
  printf -v "GW$1_PID" %s $!
  local i
  for i in $(seq 1 100); do [ -s "$TMP/gw$1.port" ] && break; sleep 0.1; done
  [ -s "$TMP/gw$1.port" ] || { cat "$TMP/gw$1.log" >&2; fail "gateway $1 did not start"; }
  printf -v "GW$1_URL" %s "http://127.0.0.1:$(cat "$TMP/gw$1.port")"
}
start_pool_gateway 1
start_pool_gateway 2

W=("$FERRY" worker --state "$STATE" --once --lease 3s --json --poll-ms 100)
WPIDS=()
for w in 1 2 3; do
  "${W[@]}" >"$TMP/w$w.out" 2>"$TMP/w$w.err" &
  WPIDS+=($!)
  PIDS+=($!)
done
/usr/bin/python3 "$FERRY_SOURCE/tests/integration/gateway_pool_client.py" "$GW1_URL,$GW2_URL" \
  gwkey gwsecret "$TMP/src" "$TMP/clients.json" --threads 8 --until "$TMP/stop" \
  >"$TMP/clients.out" 2>"$TMP/clients.err" &
CLIENTS=$!
PIDS+=("$CLIENTS")

# Gateway 1 dies once a quarter of the job is copied, in the middle of
# the clients' traffic, while it holds claims.
gw1_claims="select count(*) from gateway_keys where job = '$JOB' and mark = 'claimed' and owner like 'gateway:%:$GW1_PID'"
for _ in $(seq 1 600); do
  done_n=$("${M[@]}" status "$JOB" --json | /usr/bin/python3 -c \
    "import json,sys; j=json.load(sys.stdin); print(j['transferred']+j['skipped'])")
  [ "$done_n" -ge $((N / 4)) ] && break
  sleep 0.2
done
[ "$done_n" -ge $((N / 4)) ] || fail "the job did not get a quarter through: $done_n"
for _ in $(seq 1 200); do [ "$(state_sql "$gw1_claims")" -gt 0 ] && break; done
kill -9 "$GW1_PID"
wait "$GW1_PID" 2>/dev/null || true
state_sql "select key from gateway_keys where job = '$JOB' and mark = 'claimed' and owner like 'gateway:%:$GW1_PID'
           union select key from objects where job = '$JOB' and owner like 'gateway:%:$GW1_PID'" |
  sort -u >"$TMP/held"
echo "gateway 1 killed at $done_n of $N objects copied, holding $(wc -l <"$TMP/held") keys"

for i in "${!WPIDS[@]}"; do
  rc=0; wait "${WPIDS[$i]}" || rc=$?
  [ $rc = 0 ] || fail "worker $((i + 1)) exit $rc: $(tail -3 "$TMP/w$((i + 1)).err")"
done
sleep 2  # the clients' traffic after the job, through gateway 2 alone
touch "$TMP/stop"
rc=0; wait $CLIENTS || rc=$?
[ $rc = 0 ] || fail "the clients failed ($rc): $(cat "$TMP/clients.out" "$TMP/clients.err" | tail -6)"
echo "clients: $(cat "$TMP/clients.out")"

"${M[@]}" status "$JOB" --json >"$TMP/final.json"
/usr/bin/python3 - "$TMP/final.json" $N <<'PY' || fail "counters not exact: $(cat "$TMP/final.json")"
import json, sys
j, n = json.load(open(sys.argv[1])), int(sys.argv[2])
assert j["state"] == "completed", j
assert j["listed"] == n and j["failed"] == 0 and j["pending"] == 0, j
assert j["transferred"] + j["skipped"] == n, j
PY

bucket_listing dst >"$TMP/dst.listing"
/usr/bin/python3 - "$TMP/src" "$TMP/clients.json" "$TMP/dst.listing" <<'PY' || fail "the destination is not the source - deletes + writes"
import hashlib, json, os, sys
src, clients, listing = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
want = {}
for d, _, files in os.walk(src):
    for f in files:
        p = os.path.join(d, f)
        want[os.path.relpath(p, src)] = hashlib.md5(open(p, "rb").read()).hexdigest()
for key, md5 in clients["final"].items():
    if md5 is None:
        want.pop(key, None)
    else:
        want[key] = md5
have = {}
for line in open(listing):
    key, _, etag = line.split()
    have[key] = etag.strip('"')
missing = sorted(set(want) - set(have))
extra = sorted(set(have) - set(want))
wrong = sorted(k for k in set(want) & set(have) if want[k] != have[k])
print(f"destination: {len(have)} keys; {len(clients['final'])} changed by clients; "
      f"{len(missing)} missing, {len(extra)} extra, {len(wrong)} differ")
assert not missing and not extra and not wrong, (missing[:5], extra[:5], wrong[:5])
PY

# One source GET and one destination PUT per copied key, from the logs.
/usr/bin/python3 - "$TMP/src-requests.log" "$TMP/dst-requests.log" "$TMP/clients.json" "$TMP/held" <<'PY' ||
import json, re, sys
from collections import Counter
from urllib.parse import unquote
line = re.compile(r"\] (GET|PUT) /bkt/([^ ?]+)\S* -> 2\d\d ")
def counts(path, method):
    c = Counter()
    for l in open(path, errors="replace"):
        m = line.search(l)
        if m and m.group(1) == method:
            c[unquote(m.group(2))] += 1
    return c
gets, puts = counts(sys.argv[1], "GET"), counts(sys.argv[2], "PUT")
clients = json.load(open(sys.argv[3]))
writes, retried = clients["writes"], set(clients["retried"])
held = set(open(sys.argv[4]).read().split())
twice = sorted(k for k, n in gets.items() if n > 1)
unexplained = [k for k in twice if k not in held]
print(f"source GETs: {sum(gets.values())} for {len(gets)} keys; read twice: {len(twice)}, "
      f"all held by the killed gateway: {not unexplained}")
assert not unexplained, unexplained[:10]
bad = []
for key in set(puts) | set(gets):
    expect = min(gets.get(key, 0), 1) + writes.get(key, 0)
    slack = 1 if key in held or key in retried else 0
    if not expect <= puts.get(key, 0) <= expect + slack:
        bad.append((key, gets.get(key, 0), writes.get(key, 0), puts.get(key, 0)))
recopied = sum(1 for k in held if puts.get(k, 0) > min(gets.get(k, 0), 1) + writes.get(k, 0))
print(f"destination PUTs: {sum(puts.values())}; client writes {sum(writes.values())}; "
      f"PUT again after the kill: {recopied} of {len(held)} held keys")
assert not bad, f"(key, source GETs, client writes, PUTs): {bad[:10]}"
PY
  fail "a key was fetched or stored more than once without the kill to explain it"
echo "gateway_pool_test: ok"
