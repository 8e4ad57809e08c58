#!/usr/bin/env bash
# What a client writes or deletes through `ferry gateway` outlives the job:
#  - a foreground job with --delete, while a client writes a new key and
#    deletes a source key through the gateway: --delete removes the
#    destination's real extras but not the client's new key (the source
#    never had it), and the summary says it kept it;
#  - a job cancelled after a client deleted a key through the gateway: the
#    gateway, now reading what the job left behind from the source, still
#    answers 404 for that key and leaves it out of listings;
#  - a job with filters: the gateway copies on demand only what the job
#    would copy (a key its --exclude leaves out is passed through, one over
#    its --max-size answered but not kept, even over --inline-limit), so
#    nothing lands uncounted; a key outside it deleted stays deleted, as
#    does one deleted after a job ended;
#  - --overwrite never: a key the destination has is served from there,
#    never copied over.
source "$(dirname "$0")/lib.sh"
need curl
[ -x "$AWS" ] || skip "awscli not installed"

start_migrate_pair
seed_source 40 4 1024
printf 'gwkey gwsecret\n' >"$TMP/gw.keys"
gw() {  # gw METHOD KEY [CURL ARGS...]: a signed request through the gateway
  local method=$1 key=$2
  shift 2
  curl -s --aws-sigv4 aws:amz:us-east-1:s3 --user gwkey:gwsecret -X "$method" \
    -o "$TMP/gw.body" -w '%{http_code}' "$@" "$GW_URL/bkt/$key"
}
start_gateway() {  # start_gateway JOB [FLAGS...]
  rm -f "$TMP/gw.port"
  local job=$1
  shift
  "$FERRY" gateway --job "$job" --state "$STATE" --listen 127.0.0.1:0 --port-file "$TMP/gw.port" \
    --credentials "$TMP/gw.keys" "$@" >>"$TMP/gw.log" 2>&1 &
  GW=$!
  PIDS+=($GW)
  for _ in $(seq 1 100); do [ -s "$TMP/gw.port" ] && break; sleep 0.1; done
  [ -s "$TMP/gw.port" ] || { cat "$TMP/gw.log" >&2; fail "the gateway did not start"; }
  GW_URL="http://127.0.0.1:$(cat "$TMP/gw.port")"
}
status_of() {  # status_of METHOD PATH: a signed request's HTTP status
  curl -s --aws-sigv4 aws:amz:us-east-1:s3 --user gwkey:gwsecret -X "$1" -o /dev/null \
    -w '%{http_code}' "$GW_URL/$2"
}
mapfile -t KEYS < <(cd "$TMP/src" && find . -type f -printf '%P\n' | sort)

# --- --delete leaves the client's new key ------------------------------------------
echo "stale" >"$TMP/stale"
awsp dst s3 cp "$TMP/stale" s3://bkt/stale/extra.txt >/dev/null || fail "a stale extra"
curl -sf -XPOST "$B_URL/_admin/faults" -d '{"latency_ms": 60}' >/dev/null
"${M[@]}" s3://bkt s3://bkt --src-profile src --dst-profile dst --concurrency 1 --json \
  --delete --max-delete 10 >"$TMP/run.out" 2>"$TMP/run.err" &
RUN=$!
PIDS+=($RUN)
for _ in $(seq 1 100); do [ -s "$TMP/run.out" ] && break; sleep 0.05; done
JOB=$(head -1 "$TMP/run.out" | json_field job)
start_gateway "$JOB"
head -c 3000 /dev/urandom >"$TMP/new.bin"
[ "$(gw PUT client/new.bin --data-binary @"$TMP/new.bin")" = 200 ] || fail "PUT: $(cat "$TMP/gw.body")"
[ "$(gw DELETE "${KEYS[-1]}")" = 204 ] || fail "DELETE: $(cat "$TMP/gw.body")"
[ "$("${M[@]}" status "$JOB" --json | json_field state)" = running ] ||
  fail "the job ended before the client's writes (too fast a destination for this test)"
rc=0; wait $RUN || rc=$?
[ $rc = 0 ] || fail "the job with --delete: exit $rc: $(tail -3 "$TMP/run.err")"
/usr/bin/python3 - "$TMP/run.out" <<'PY' || fail "--delete: $(grep -i delete "$TMP/run.out")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
d = [l for l in lines if "kept_written_through_gateway" in json.dumps(l)]
assert d, "no --delete summary"
text = json.dumps(d[-1])
blob = d[-1].get("delete", d[-1])
assert blob["deleted"] == 1 and blob["extra"] == 1 and blob["kept_written_through_gateway"] == 1, text
PY
curl -sf -XPOST "$B_URL/_admin/faults" -d '{}' >/dev/null
awsp dst s3 cp s3://bkt/client/new.bin "$TMP/new.back" >/dev/null || fail "--delete removed the client's key"
same_bytes "$TMP/new.bin" "$TMP/new.back"
awsp dst s3api head-object --bucket bkt --key stale/extra.txt >/dev/null 2>&1 &&
  fail "--delete left the real extra"
awsp dst s3api head-object --bucket bkt --key "${KEYS[-1]}" >/dev/null 2>&1 &&
  fail "the job resurrected a key deleted through the gateway"
kill "$GW"; wait "$GW" 2>/dev/null || true

# --- a cancelled job: a key deleted through the gateway stays deleted ----------------
awsp dst s3 mb s3://bkt2 >/dev/null 2>&1 || true
"${M[@]}" s3://bkt s3://bkt2 --src-profile src --dst-profile dst --detach --json >"$TMP/job2.json" ||
  fail "--detach failed"
JOB2=$(json_field job <"$TMP/job2.json")
start_gateway "$JOB2"
GONE=${KEYS[0]} KEPT=${KEYS[1]}
[ "$(status_of DELETE "bkt2/$GONE")" = 204 ] || fail "DELETE through the second gateway"
"${M[@]}" cancel "$JOB2" >/dev/null || fail "cancel"
"$FERRY" worker --state "$STATE" --once --poll-ms 100 >/dev/null 2>&1 || true
for _ in $(seq 1 100); do
  [ "$("${M[@]}" status "$JOB2" --json | json_field state)" = cancelled ] && break
  sleep 0.1
done
[ "$("${M[@]}" status "$JOB2" --json | json_field state)" = cancelled ] ||
  fail "job 2: $("${M[@]}" status "$JOB2" --json)"
code=$(status_of GET "bkt2/$GONE")
[ "$code" = 404 ] || fail "after the cancelled job, a key deleted through the gateway answered $code"
code=$(curl -s --aws-sigv4 aws:amz:us-east-1:s3 --user gwkey:gwsecret -o "$TMP/kept" -w '%{http_code}' \
  "$GW_URL/bkt2/$KEPT")
[ "$code" = 200 ] || fail "after the cancelled job, a key the job left answered $code"
same_bytes "$TMP/src/$KEPT" "$TMP/kept"
listing=$(curl -s --aws-sigv4 aws:amz:us-east-1:s3 --user gwkey:gwsecret "$GW_URL/bkt2?list-type=2")
grep -q "<Key>$KEPT</Key>" <<<"$listing" || fail "the listing lacks $KEPT"
grep -q "<Key>$GONE</Key>" <<<"$listing" && fail "the listing has the deleted $GONE"
# A delete after the job ended is recorded too: it stays deleted.
[ "$(status_of DELETE "bkt2/$KEPT")" = 204 ] || fail "DELETE after the cancelled job"
code=$(status_of GET "bkt2/$KEPT")
[ "$code" = 404 ] || fail "a key deleted after the cancelled job answered $code"
kill "$GW"; wait "$GW" 2>/dev/null || true

# --- the job's filters bound what is copied on demand ------------------------------------
mkdir -p "$TMP/extra"
head -c 500 /dev/urandom >"$TMP/extra/a.skip"
head -c 5000 /dev/urandom >"$TMP/extra/big.bin"
head -c 500 /dev/urandom >"$TMP/extra/ok.bin"
awsp src s3 cp --recursive "$TMP/extra" s3://bkt/extra/ >/dev/null || fail "extra source keys"
awsp dst s3 mb s3://bkt3 >/dev/null 2>&1 || true
"${M[@]}" s3://bkt s3://bkt3 --src-profile src --dst-profile dst --detach --json \
  --exclude '*.skip' --max-size 2000 >"$TMP/job3.json" || fail "--detach with filters failed"
# (A 4 KiB inline limit: big.bin, over --max-size, is also over the limit
# and streamed through a window, then not kept.)
start_gateway "$(json_field job <"$TMP/job3.json")" --inline-limit 4K
answer() {  # answer KEY: GET through the gateway; prints its x-ferry-answer
  curl -sf --aws-sigv4 aws:amz:us-east-1:s3 --user gwkey:gwsecret -o "$TMP/got" -D - \
    "$GW_URL/bkt3/extra/$1" | tr -d '\r' | awk -F': ' 'tolower($1) == "x-ferry-answer" {print $2}'
  same_bytes "$TMP/extra/$1" "$TMP/got"
}
[ "$(answer a.skip)" = passthrough ] || fail "an excluded key was not passed through"
answer big.bin >/dev/null
[ "$(answer ok.bin)" = on_demand ] || fail "a key the job copies was not copied on demand"
metric() { curl -sf "$GW_URL/_ferry/metrics" | awk -v n="$1" '$1 == n {print $2; exit}'; }
for _ in $(seq 1 50); do [ "$(metric ferry_gateway_on_demand_copies_total)" = 1 ] && break; sleep 0.1; done
[ "$(metric ferry_gateway_on_demand_copies_total)" = 1 ] ||
  fail "on-demand copies $(metric ferry_gateway_on_demand_copies_total), want 1 (ok.bin)"
kept=$(awsp dst s3 ls s3://bkt3/extra/ | awk '{print $NF}' | tr '\n' ' ')
[ "$kept" = "ok.bin " ] || fail "the destination holds: $kept (want only ok.bin)"
# A key outside the job deleted through the gateway stays deleted (not
# served from the source again).
[ "$(status_of DELETE bkt3/extra/a.skip)" = 204 ] || fail "DELETE of an excluded key"
code=$(status_of GET bkt3/extra/a.skip)
[ "$code" = 404 ] || fail "an excluded key deleted through the gateway answered $code"
kill "$GW"; wait "$GW" 2>/dev/null || true

# --- --overwrite never: what the destination has is served, never copied over ----------
awsp dst s3 mb s3://bkt4 >/dev/null 2>&1 || true
echo "the destination's own" >"$TMP/theirs"
awsp dst s3 cp "$TMP/theirs" "s3://bkt4/extra/ok.bin" >/dev/null || fail "a destination object"
"${M[@]}" s3://bkt s3://bkt4 --src-profile src --dst-profile dst --detach --json \
  --overwrite never >"$TMP/job4.json" || fail "--detach --overwrite never failed"
start_gateway "$(json_field job <"$TMP/job4.json")"
curl -sf --aws-sigv4 aws:amz:us-east-1:s3 --user gwkey:gwsecret -o "$TMP/ok4" \
  "$GW_URL/bkt4/extra/ok.bin" || fail "GET under --overwrite never"
same_bytes "$TMP/theirs" "$TMP/ok4"
awsp dst s3 cp s3://bkt4/extra/ok.bin "$TMP/ok4b" >/dev/null
same_bytes "$TMP/theirs" "$TMP/ok4b"
echo "gateway marks after the job, and the job's scope: OK"
