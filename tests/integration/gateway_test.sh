#!/usr/bin/env bash
# `ferry gateway` in front of a 20,000-object migration between two test
# servers, with awscli and botocore as its clients:
#  - before any worker runs: reads copy on demand (whole, a range,
#    If-None-Match), a HEAD copies nothing; wrong keys and another bucket
#    are refused; a write, an overwrite and a delete go to the destination;
#  - a source outage: 503 for keys not copied yet, copied ones still served;
#  - the gateway killed between writing an on-demand copy and marking it,
#    restarted: once the dead gateway's lease ends the key is served from
#    the destination, and the job copies it again (counted once);
#  - then a worker runs the job while botocore reads every object through
#    the gateway: every body equals the source's, the job completes with
#    exact counters, the destination equals the source but for the three
#    writes (which the job left alone), and the source served each object
#    once and the destination stored each once (the test servers' counters),
#    the one re-copy after the crash aside;
#  - after the job: the destination alone answers; over HTTPS (h2 by ALPN)
#    too, with awscli checking the certificate.
source "$(dirname "$0")/lib.sh"
need curl
[ -x "$AWS" ] || skip "awscli not installed"

start_migrate_pair
N=${GATEWAY_TEST_N:-20000}
seed_source $N 40 2048
"${M[@]}" s3://bkt s3://bkt --src-profile src --dst-profile dst --detach --json \
  --concurrency 16 --list-concurrency 1 >"$TMP/job.json" || fail "--detach failed"
JOB=$(json_field job <"$TMP/job.json")

printf '# the gateway'"'"'s own keys\ngwkey gwsecret\n' >"$TMP/gw.keys"
# Bad input: one line each, nothing started.
one_line_error() {  # one_line_error WHAT PATTERN ARGS...: ferry gateway ARGS fails so
  local what=$1 pattern=$2 out rc=0
  shift 2
  out=$("$FERRY" gateway "$@" 2>&1) || rc=$?
  [ $rc != 0 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q -- "$pattern" <<<"$out" ||
    fail "$what: exit $rc: $out"
}
one_line_error "no credentials" "--credentials FILE is required" --job "$JOB" --state "$STATE"
one_line_error "unknown job" "no job nope" --job nope --state "$STATE" --credentials "$TMP/gw.keys"
printf 'onlyakey\n' >"$TMP/bad.keys"
one_line_error "bad credentials" "line 1: expected ACCESS_KEY_ID SECRET_ACCESS_KEY" --job "$JOB" \
  --state "$STATE" --credentials "$TMP/bad.keys"
one_line_error "unreachable PostgreSQL" "cannot connect to PostgreSQL" --job "$JOB" --state postgres://nowhere/db \
  --credentials "$TMP/gw.keys"
one_line_error "bad size" "--inline-limit" --job "$JOB" --state "$STATE" --credentials "$TMP/gw.keys" \
  --inline-limit lots
GW_LISTEN=127.0.0.1:0  # then the first one's port, so clients find a restarted gateway
start_gateway() {
  rm -f "$TMP/gw.port"
  "$FERRY" gateway --job "$JOB" --state "$STATE" --listen "$GW_LISTEN" --port-file "$TMP/gw.port" \
    --credentials "$TMP/gw.keys" --lease 3 --retries 1 --timeout 3 "$@" >>"$TMP/gw.log" 2>&1 &
  GW=$!
  PIDS+=($GW)
  for _ in $(seq 1 100); do [ -s "$TMP/gw.port" ] && break; sleep 0.1; done
  [ -s "$TMP/gw.port" ] || { cat "$TMP/gw.log" >&2; fail "the gateway did not start"; }
  GW_URL="http://127.0.0.1:$(cat "$TMP/gw.port")"
  GW_LISTEN="127.0.0.1:$(cat "$TMP/gw.port")"
}
# The first one from a config file, as the packaged service runs it.
printf 'job = "%s"\nstate = "%s"\ncredentials = "%s"\nlease = 3\nretries = 1\ntimeout = 3\n' \
  "$JOB" "$STATE" "$TMP/gw.keys" >"$TMP/gateway.toml"
rm -f "$TMP/gw.port"
"$FERRY" gateway --config "$TMP/gateway.toml" --listen 127.0.0.1:0 --port-file "$TMP/gw.port" >>"$TMP/gw.log" 2>&1 &
GW=$!
PIDS+=($GW)
for _ in $(seq 1 100); do [ -s "$TMP/gw.port" ] && break; sleep 0.1; done
[ -s "$TMP/gw.port" ] || { cat "$TMP/gw.log" >&2; fail "the gateway did not start from its config"; }
GW_URL="http://127.0.0.1:$(cat "$TMP/gw.port")" GW_LISTEN="127.0.0.1:$(cat "$TMP/gw.port")"
add_profile gw "$GW_URL" gwkey gwsecret
add_profile badsecret "$GW_URL" gwkey wrong
add_profile badkey "$GW_URL" nokey gwsecret
export AWS_MAX_ATTEMPTS=1
metric() {  # metric NAME [LABELS]: one sample of the gateway's metrics
  curl -sf "$GW_URL/_ferry/metrics" | awk -v n="$1${2:-}" '$1 == n {print $2; exit}'
}
wait_copies() {  # wait_copies N: on-demand copies written and marked
  for _ in $(seq 1 100); do [ "$(metric ferry_gateway_on_demand_copies_total)" = "$1" ] && return; sleep 0.1; done
  fail "on-demand copies: $(metric ferry_gateway_on_demand_copies_total), want $1"
}
src_gets() { echo $(( $(stat_of "$A_URL" get requests) - $(stat_of "$A_URL" get errors) )); }
dst_puts() { echo $(( $(stat_of "$B_URL" put requests) - $(stat_of "$B_URL" put errors) )); }

# Refused: wrong secret, unknown key, another bucket. Nothing reached a store.
err=$(awsp badsecret s3api list-objects-v2 --bucket bkt 2>&1) && fail "a wrong secret was accepted"
grep -q SignatureDoesNotMatch <<<"$err" || fail "wrong secret: $err"
err=$(awsp badkey s3api head-bucket --bucket bkt 2>&1) && fail "an unknown key was accepted"
grep -q -E '403|InvalidAccessKeyId' <<<"$err" || fail "unknown key: $err"
err=$(awsp gw s3api list-objects-v2 --bucket other 2>&1) && fail "another bucket was reachable"
grep -q NoSuchBucket <<<"$err" || fail "other bucket: $err"
[ "$(metric ferry_gateway_auth_failures_total)" = 2 ] || fail "auth failures not counted"

# Reads of keys the job has not copied: each copied on demand, once.
mapfile -t BIG < <(cd "$TMP/src" && find . -type f -size +1k -printf '%P\n' | sort | head -12)
K1=${BIG[0]} K2=${BIG[1]} K3=${BIG[2]} K4=${BIG[3]} K9=${BIG[8]}
awsp gw s3api get-object --bucket bkt --key "$K1" "$TMP/k1" >/dev/null || fail "GET $K1"
same_bytes "$TMP/src/$K1" "$TMP/k1"
awsp gw s3api get-object --bucket bkt --key "$K2" --range bytes=100-899 "$TMP/k2" >"$TMP/k2.json" ||
  fail "ranged GET $K2"
grep -q '"ContentRange": "bytes 100-899/' "$TMP/k2.json" || fail "no Content-Range: $(cat "$TMP/k2.json")"
cmp -s "$TMP/k2" <(tail -c +101 "$TMP/src/$K2" | head -c 800) || fail "range of $K2 differs"
etag=$(md5sum "$TMP/src/$K3" | cut -d' ' -f1)
err=$(awsp gw s3api get-object --bucket bkt --key "$K3" --if-none-match "\"$etag\"" "$TMP/k3" 2>&1) &&
  fail "If-None-Match with the ETag answered 200"
grep -q 304 <<<"$err" || fail "If-None-Match: $err"
awsp gw s3api get-object --bucket bkt --key "$K3" --if-none-match '"other"' "$TMP/k3" >/dev/null ||
  fail "If-None-Match with another ETag"
same_bytes "$TMP/src/$K3" "$TMP/k3"
size=$(awsp gw s3api head-object --bucket bkt --key "$K4" --query ContentLength --output text)
[ "$size" = "$(stat -c %s "$TMP/src/$K4")" ] || fail "HEAD $K4 says $size"
wait_copies 3
[ "$(src_gets)" = 3 ] || fail "the source served $(src_gets) GETs for 3 on-demand copies"
[ "$(dst_puts)" = 3 ] || fail "the destination stored $(dst_puts) objects for 3 copies"
awsp gw s3api get-object --bucket bkt --key "$K1" "$TMP/k1b" >/dev/null || fail "GET $K1 again"
same_bytes "$TMP/src/$K1" "$TMP/k1b"
[ "$(src_gets)" = 3 ] || fail "a copied key was fetched from the source again"

# Writes through the gateway: a new key, an overwrite and a delete of keys
# the job has not copied yet.
OVER=${BIG[10]} GONE=${BIG[11]}
head -c 5000 /dev/urandom >"$TMP/new.bin"
awsp gw s3 cp "$TMP/new.bin" s3://bkt/gw-new/written.bin >/dev/null || fail "PUT a new key"
awsp gw s3 cp "$TMP/new.bin" "s3://bkt/$OVER" >/dev/null || fail "PUT over $OVER"
awsp gw s3 rm "s3://bkt/$GONE" >/dev/null || fail "DELETE $GONE"
err=$(awsp gw s3api head-object --bucket bkt --key "$GONE" 2>&1) && fail "$GONE still there"
awsp gw s3 cp "s3://bkt/$OVER" "$TMP/over" >/dev/null || fail "GET $OVER"
same_bytes "$TMP/new.bin" "$TMP/over"
listed=$(awsp gw s3 ls s3://bkt --recursive | wc -l)
[ "$listed" = "$N" ] || fail "the gateway lists $listed keys, want $N (one deleted, one new)"
# Delimited listings paged three at a time: every top-level prefix once.
tops=$(awsp gw s3 ls s3://bkt/ --page-size 3 | awk '{print $NF}' | sort)
[ "$(wc -l <<<"$tops")" = 41 ] && [ "$(sort -u <<<"$tops" | wc -l)" = 41 ] ||
  fail "a delimited listing in pages of 3: $(wc -l <<<"$tops") lines: $(head -3 <<<"$tops")"
# A HEAD's error carries no body: the next answer on the same connection is whole.
codes=$(curl -s --aws-sigv4 aws:amz:us-east-1:s3 --user gwkey:gwsecret -w 'code=%{http_code}\n' \
  -I "$GW_URL/bkt/no/such/key" -I "$GW_URL/bkt/$K1" -I "$GW_URL/bkt/no/such/key" |
  grep -o 'code=[0-9]*' | tr '\n' ' ')
[ "$codes" = "code=404 code=200 code=404 " ] || fail "HEADs on one connection: $codes"

# A source outage: 503 for a key not copied yet, copied keys still served.
curl -sf -XPOST "$A_URL/_admin/faults" -d '{"kind":"503"}' >/dev/null
err=$(awsp gw s3api get-object --bucket bkt --key "${BIG[5]}" "$TMP/x" 2>&1) &&
  fail "a key not copied was served during the outage"
grep -q ServiceUnavailable <<<"$err" || fail "outage: $err"
awsp gw s3api get-object --bucket bkt --key "$K1" "$TMP/k1c" >/dev/null ||
  fail "a copied key was not served during the outage"
same_bytes "$TMP/src/$K1" "$TMP/k1c"
curl -sf -XPOST "$A_URL/_admin/faults" -d '{"kind":"none"}' >/dev/null

# Killed between writing an on-demand copy and marking it; restarted.
kill "$GW"; wait "$GW" || true
FERRY_CRASH_AT=gateway-copied:1 start_gateway
awsp gw s3api get-object --bucket bkt --key "$K9" "$TMP/k9" >/dev/null 2>&1 || true
rc=0; wait "$GW" || rc=$?
[ $rc = 137 ] || fail "the gateway should die at its crash point, exit $rc"
start_gateway
awsp gw s3api get-object --bucket bkt --key "$K9" "$TMP/k9" >/dev/null ||
  fail "GET $K9 after the crash"
same_bytes "$TMP/src/$K9" "$TMP/k9"
# Once the dead gateway's claim lapsed the key was found written, so it was
# served from there and not fetched again; its claim was dropped unmarked,
# so the job copies it once more (counted once).
[ "$(metric ferry_gateway_requests_total '{answer="destination"}')" = 1 ] ||
  fail "$K9 was not served from the destination after the crash"
[ "$(metric ferry_gateway_busy_waits_total)" = 1 ] || fail "the dead gateway's claim was not waited out"
[ "$(src_gets)" = 4 ] || fail "source GETs $(src_gets), want 4 (3 copies and the crashed one)"

# The job runs while botocore reads every object through the gateway.
(cd "$TMP/src" && find . -type f -printf '%P\n') | grep -v -x -e "$OVER" -e "$GONE" >"$TMP/keys"
"$FERRY" worker --state "$STATE" --once --lease 3s --json --poll-ms 100 >"$TMP/w.out" 2>"$TMP/w.err" &
W=$!
/usr/bin/python3 "$FERRY_SOURCE/tests/integration/gateway_reader.py" "$GW_URL" gwkey gwsecret bkt \
  "$TMP/src" --keys "$TMP/keys" --threads 8 >"$TMP/reader.json" ||
  fail "reading through the gateway: $(cat "$TMP/reader.json")"
echo "reader: $(cat "$TMP/reader.json")"
wait $W || fail "the worker failed: $(tail -3 "$TMP/w.err")"
"${M[@]}" status "$JOB" --json >"$TMP/status.json"
for f in state:completed listed:$N transferred:$((N - 2)) skipped:2 failed:0; do
  [ "$(json_field "${f%%:*}" <"$TMP/status.json")" = "${f#*:}" ] ||
    fail "job ${f%%:*} is $(json_field "${f%%:*}" <"$TMP/status.json"), want ${f#*:}"
done

# The writes survived the job; everything else equals the source.
bucket_listing src | grep -v -e "^$OVER " -e "^$GONE " >"$TMP/src.list"
bucket_listing dst | grep -v -e "^$OVER " -e "^gw-new/written.bin " >"$TMP/dst.list"
diff -q "$TMP/src.list" "$TMP/dst.list" >/dev/null || fail "destination differs: $(diff "$TMP/src.list" "$TMP/dst.list" | head -5)"
awsp dst s3 cp "s3://bkt/$OVER" "$TMP/over2" >/dev/null || fail "$OVER gone from the destination"
same_bytes "$TMP/new.bin" "$TMP/over2"
awsp dst s3api head-object --bucket bkt --key "$GONE" >/dev/null 2>&1 && fail "the job resurrected $GONE"
awsp dst s3api head-object --bucket bkt --key gw-new/written.bin >/dev/null || fail "the new key is gone"
# Each object fetched from the source once and stored once (the crash's
# re-copy of $K9 aside), whether the gateway or the job copied it.
[ "$(src_gets)" = $((N - 2 + 1)) ] || fail "source GETs $(src_gets), want $((N - 1))"
[ "$(dst_puts)" = $((N - 2 + 1 + 2)) ] || fail "destination PUTs $(dst_puts), want $((N + 1))"

# The job is done: the destination alone answers.
before=$(metric ferry_gateway_requests_total '{answer="destination"}')
awsp gw s3api get-object --bucket bkt --key "$K2" "$TMP/k2b" >/dev/null || fail "GET after the job"
same_bytes "$TMP/src/$K2" "$TMP/k2b"
[ "$(metric ferry_gateway_requests_total '{answer="destination"}')" = $((before + 1)) ] ||
  fail "after the job the destination did not answer"
[ "$(awsp gw s3 ls s3://bkt --recursive | wc -l)" = "$N" ] || fail "listing after the job"

# HTTPS beside plain HTTP (HTTP/2 by ALPN), awscli checking the certificate.
self_signed_cert gw
kill "$GW"; wait "$GW" || true
start_gateway --listen-tls 127.0.0.1:0 --tls-port-file "$TMP/gw.tls.port" --tls-cert "$TMP/gw.pem" \
  --tls-key "$TMP/gw.key"
TLS_URL="https://127.0.0.1:$(cat "$TMP/gw.tls.port")"
"$AWS" --profile gw --endpoint-url "$TLS_URL" --ca-bundle "$TMP/gw.pem" s3api get-object --bucket bkt \
  --key "$K3" "$TMP/k3tls" >/dev/null || fail "GET over HTTPS"
same_bytes "$TMP/src/$K3" "$TMP/k3tls"
err=$("$AWS" --profile gw --endpoint-url "$TLS_URL" s3api head-bucket --bucket bkt 2>&1) &&
  fail "awscli accepted a certificate it was not given"
grep -q -i certificate <<<"$err" || fail "untrusted certificate: $err"
[ "$(curl -s --cacert "$TMP/gw.pem" --http2 -o /dev/null -w '%{http_version}' "$TLS_URL/_ferry/metrics")" = 2 ] ||
  fail "no HTTP/2 over TLS"
echo "PASS"
