#!/usr/bin/env bash
# Faults and outages during a migration between two test servers:
#  1. 5% 503 SlowDown, 1% 500, 0.5% resets mid-body, 20 source reads with a
#     flipped byte (and one part of a multipart copy) and 10 keys answering 403: the 10 end in the dead-letter
#     queue with their reason, every other object arrives intact (no corrupt
#     copy lands), the exit code says so, and `dlq --retry` after the fault
#     is lifted completes them.
#  2. The destination stops answering for 10 s mid-job: the circuit opens
#     (reported), nothing is dead-lettered for it, and the job completes
#     after it returns.
source "$(dirname "$0")/lib.sh"
need curl

start_test_s3; A_URL=$S3_URL
mkdir -p "$TMP/bdata"
B_PORT=$(free_port)
start_b() {
  TEST_S3_LISTEN="127.0.0.1:$B_PORT" start_test_s3 --dir "$TMP/bdata"
  B_PID=${PIDS[-1]}
  B_URL=$S3_URL
}
start_b
add_profile src "$A_URL" "$TEST_KEY" "$TEST_SECRET"
add_profile dst "$B_URL" "$TEST_KEY" "$TEST_SECRET"
use_state
M=("$FERRY" migrate --state "$STATE" --src-profile src --dst-profile dst)

# 3,000 objects (10 of them under deny/) seeded through ferry itself.
SRC="$TMP/src"
/usr/bin/python3 - "$SRC" <<'PY'
import os, random, sys
root = sys.argv[1]
r = random.Random(3000)
for i in range(2990):
    d = os.path.join(root, f"p{i % 10}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"o{i:04d}"), "wb") as f:
        f.write(r.randbytes(r.randint(1, 64 << 10)))
os.makedirs(os.path.join(root, "deny"))
for i in range(10):
    with open(os.path.join(root, "deny", f"k{i}"), "wb") as f:
        f.write(r.randbytes(100))
with open(os.path.join(root, "partdeny"), "wb") as f:  # multipart, parts refused
    f.write(r.randbytes(12 << 20))
with open(os.path.join(root, "bigflip"), "wb") as f:  # multipart, one part read corrupt
    f.write(r.randbytes(12 << 20))
PY
"$FERRY" migrate --state "$STATE" "$SRC" s3://bkt/ --dst-profile src --json >"$TMP/seed.json" ||
  fail "seeding failed"

# --- 1. mixed faults at the destination ------------------------------------
curl -sf -XPOST "$B_URL/_admin/faults" -d '{"seed": 7, "rules": [
  {"kind": "403", "key_regex": "^deny/"},
  {"kind": "403", "key_regex": "^partdeny$", "op": "upload-part"},
  {"kind": "503", "probability": 0.05},
  {"kind": "500", "probability": 0.01},
  {"kind": "reset", "op": "put", "probability": 0.005},
  {"kind": "reset", "op": "get", "probability": 0.005}]}' >/dev/null || fail "fault rules refused"
curl -sf -XPOST "$A_URL/_admin/faults" -d '{"seed": 8, "rules": [
  {"kind": "corrupt", "key_regex": "^p3/", "count": 20},
  {"kind": "corrupt", "key_regex": "^bigflip$", "count": 1},
  {"kind": "503", "probability": 0.05}, {"kind": "500", "probability": 0.01},
  {"kind": "reset", "op": "get", "probability": 0.005}]}' >/dev/null
rc=0
"${M[@]}" s3://bkt s3://bkt --json --concurrency 32 --multipart-threshold 8M --part-size 5M \
  >"$TMP/f.json" 2>"$TMP/f.err" || rc=$?
[ $rc = 3 ] || fail "exit code $rc with dead letters, want 3: $(tail -3 "$TMP/f.err")"
JOB=$(head -1 "$TMP/f.json" | json_field job)
/usr/bin/python3 - "$TMP/f.json" <<'PY' || fail "summary: $(tail -1 "$TMP/f.json")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
s = lines[-1]
assert s["state"] == "failed", s
assert s["listed"] == 3002 and s["failed"] == 11 and s["transferred"] == 2991, s
dead = sorted(l["key"] for l in lines if l.get("event") == "dead_letter")
assert dead == [f"deny/k{i}" for i in range(10)] + ["partdeny"], dead
PY
"${M[@]}" dlq "$JOB" --json >"$TMP/dlq.json"
/usr/bin/python3 - "$TMP/dlq.json" <<'PY' || fail "dlq: $(cat "$TMP/dlq.json")"
import json, sys
d = [json.loads(l) for l in open(sys.argv[1])]
assert len(d) == 11, d
for e in d:
    assert e["key"].startswith("deny/") or e["key"] == "partdeny", e
    assert e["reason"] == "access denied", e
    assert e["attempts"] >= 1 and "403" in e["last_error"], e
PY
# The dead-lettered multipart object's upload was aborted, not left behind.
open=$(curl -sf "$B_URL/_admin/stats" | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['storage']['multipart_uploads'])")
[ "$open" = 0 ] || fail "$open multipart uploads left open after a dead letter"
injected=$(curl -sf "$B_URL/_admin/stats" | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['faults']['injected'])")
[ "$injected" -gt 100 ] || fail "only $injected faults were injected"
flipped=$(curl -sf "$A_URL/_admin/stats" | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['faults']['rules'][0]['injected'])")
[ "$flipped" = 20 ] || fail "$flipped corrupt reads injected, want 20"
flipped=$(curl -sf "$A_URL/_admin/stats" | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['faults']['rules'][1]['injected'])")
[ "$flipped" = 1 ] || fail "$flipped corrupt part reads injected, want 1"
awsp dst s3 cp --quiet s3://bkt/bigflip "$TMP/bigflip.back"
same_bytes "$SRC/bigflip" "$TMP/bigflip.back"
# Every object that was not denied is intact (compare with the source).
cmp_tree() {
  for p in "$@"; do
    awsp "$p" s3api list-objects-v2 --bucket bkt --output json |
      /usr/bin/python3 -c "import json,sys; [print(o['Key'],o['Size'],o['ETag'] if o['Key'] not in ('partdeny', 'bigflip') else 'multipart') for o in sorted(json.load(sys.stdin).get('Contents',[]),key=lambda o:o['Key'])]"
  done
}
curl -sf -XPOST "$A_URL/_admin/faults" -d '{}' >/dev/null
curl -sf -XPOST "$B_URL/_admin/faults" -d '{}' >/dev/null
cmp_tree src | grep -v '^deny/' | grep -v '^partdeny ' >"$TMP/la"; cmp_tree dst >"$TMP/lb"
diff "$TMP/la" "$TMP/lb" >/dev/null || fail "destination differs: $(diff "$TMP/la" "$TMP/lb" | head -3)"
# Lifted: dlq --retry completes the ten.
"${M[@]}" dlq "$JOB" --retry --json >"$TMP/r.json" || fail "dlq --retry failed"
/usr/bin/python3 - "$TMP/r.json" <<'PY' || fail "after retry: $(tail -1 "$TMP/r.json")"
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
assert s["state"] == "completed" and s["listed"] == 3002, s
assert s["transferred"] == 3002 and s["failed"] == 0 and s["skipped"] == 0, s
PY
cmp_tree src >"$TMP/la"; cmp_tree dst >"$TMP/lb"
diff "$TMP/la" "$TMP/lb" >/dev/null || fail "destination differs after dlq --retry"
awsp dst s3 cp --quiet s3://bkt/partdeny "$TMP/partdeny.back"
same_bytes "$SRC/partdeny" "$TMP/partdeny.back"

# --- 2. the destination goes away for 10 s ---------------------------------
"${M[@]}" s3://bkt s3://bkt/outage/ --json --concurrency 16 --bwlimit 8M >"$TMP/o.json" 2>"$TMP/o.err" &
RUN=$!
for _ in $(seq 1 200); do
  OJOB=$(head -1 "$TMP/o.json" 2>/dev/null | sed -n 's/.*"job":"\([^"]*\)".*/\1/p')
  [ -n "$OJOB" ] || { sleep 0.1; continue; }
  done_now=$(state_sql "select transferred from jobs where id='$OJOB'" 2>/dev/null || echo 0)
  [ "${done_now:-0}" -ge 300 ] && break
  sleep 0.1
done
kill "$B_PID"; wait "$B_PID" 2>/dev/null || true
sleep 10
start_b
wait $RUN || fail "the job did not complete after the outage: $(tail -3 "$TMP/o.err")"
/usr/bin/python3 - "$TMP/o.json" <<'PY' || fail "outage run: $(grep -v progress "$TMP/o.json" | tail -5)"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
s = lines[-1]
assert s["state"] == "completed" and s["listed"] == 3002, s
assert s["failed"] == 0 and s["transferred"] + s["skipped"] == 3002, s
assert not [l for l in lines if l.get("event") == "dead_letter"], "dead-lettered during the outage"
opened = [l for l in lines if l.get("event") == "circuit" and "destination open" in l.get("circuits", "")]
assert opened, "the destination's circuit never opened"
PY
awsp dst s3api list-objects-v2 --bucket bkt --prefix outage/ --output json |
  /usr/bin/python3 -c "import json,sys; print(len(json.load(sys.stdin)['Contents']))" >"$TMP/n"
[ "$(cat "$TMP/n")" = 3002 ] || fail "$(cat "$TMP/n") objects arrived after the outage"
echo "migrate_faults_test: ok"
