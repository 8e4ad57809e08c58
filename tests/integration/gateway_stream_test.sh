#!/usr/bin/env bash
# `ferry gateway` answers an on-demand copy as its bytes arrive from the
# source, with a source that sends 1 MB/s (the test server's bandwidth):
#  - two clients read a 3 MiB object not copied yet at once: each has its
#    first byte long before the source has sent the last, both bodies equal
#    the source's, and the source served one GET (the second client reads
#    the first one's arriving copy);
#  - the source's connection reset mid-body: the client's connection is cut
#    (never a short body taken as whole), and the next read copies it whole;
#  - an object over --inline-limit is streamed too, through a window,
#    each part uploaded as it comes; read again, from the destination;
#  - every copy is written to the destination and counted once.
source "$(dirname "$0")/lib.sh"
need curl
[ -x "$AWS" ] || skip "awscli not installed"

start_migrate_pair
mkdir -p "$TMP/src/big"
for i in $(seq 1 10); do head -c 1000 /dev/urandom >"$TMP/src/small-$i"; done
head -c $((3 << 20)) /dev/urandom >"$TMP/src/big/stream.bin"
head -c $((2 << 20)) /dev/urandom >"$TMP/src/big/cut.bin"
head -c $((5 << 20)) /dev/urandom >"$TMP/src/big/large.bin"
head -c $((40 << 20)) /dev/urandom >"$TMP/src/big/parts.bin"
"${M[@]}" "$TMP/src" s3://bkt/ --dst-profile src --json -q >/dev/null || fail "seeding failed"
"${M[@]}" s3://bkt s3://bkt --src-profile src --dst-profile dst --detach --json >"$TMP/job.json" ||
  fail "--detach failed"
JOB=$(json_field job <"$TMP/job.json")
printf 'gwkey gwsecret\n' >"$TMP/gw.keys"
"$FERRY" gateway --job "$JOB" --state "$STATE" --listen 127.0.0.1:0 --port-file "$TMP/gw.port" \
  --credentials "$TMP/gw.keys" --retries 1 --timeout 10 --inline-limit 4M >"$TMP/gw.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do [ -s "$TMP/gw.port" ] && break; sleep 0.1; done
[ -s "$TMP/gw.port" ] || { cat "$TMP/gw.log" >&2; fail "the gateway did not start"; }
GW_URL="http://127.0.0.1:$(cat "$TMP/gw.port")"
metric() { curl -sf "$GW_URL/_ferry/metrics" | awk -v n="$1${2:-}" '$1 == n {print $2; exit}'; }
src_gets() { echo $(( $(stat_of "$A_URL" get requests) - $(stat_of "$A_URL" get errors) )); }
get() {  # get KEY OUT: curl through the gateway; prints "first-byte-s total-s", fails on HTTP errors
  curl -sf --aws-sigv4 aws:amz:us-east-1:s3 --user gwkey:gwsecret -o "$2" \
    -w '%{time_starttransfer} %{time_total}\n' "$GW_URL/bkt/$1"
}
faults() { curl -sf -XPOST "$A_URL/_admin/faults" -d "$1" >/dev/null || fail "faults $1"; }

# Two clients at once, a source at 1 MB/s: bytes as they arrive, one fetch.
faults '{"bandwidth": 1000000}'
gets0=$(src_gets)
get big/stream.bin "$TMP/s1" >"$TMP/t1" &
c1=$!
sleep 0.3
get big/stream.bin "$TMP/s2" >"$TMP/t2" || fail "the second client's GET"
wait $c1 || fail "the first client's GET"
same_bytes "$TMP/src/big/stream.bin" "$TMP/s1"
same_bytes "$TMP/src/big/stream.bin" "$TMP/s2"
read -r first total <"$TMP/t1"
echo "first client: first byte at ${first}s of ${total}s"
awk -v f="$first" -v t="$total" 'BEGIN { exit !(t > 2.5 && f < t / 4) }' ||
  fail "not streamed: first byte at ${first}s of ${total}s (the source takes over 3 s)"
read -r first2 total2 <"$TMP/t2"
awk -v f="$first2" -v t="$total2" 'BEGIN { exit !(f < t / 2) }' ||
  fail "the second client waited for the whole body: first byte ${first2}s of ${total2}s"
[ $(( $(src_gets) - gets0 )) = 1 ] || fail "the source served $(( $(src_gets) - gets0 )) GETs for one key"
[ "$(metric ferry_gateway_shared_fetches_total)" = 1 ] || fail "the second client did not share the copy"

# The source's connection reset mid-body: the client's is cut, then a
# second read copies the object whole.
faults '{"bandwidth": 1000000, "rules": [{"kind": "reset", "op": "get", "key_regex": "cut\\.bin$", "count": 1}]}'
rc=0
get big/cut.bin "$TMP/c1" >/dev/null 2>&1 || rc=$?
[ $rc != 0 ] || fail "a GET whose source was reset mid-body ended well"
[ "$(stat -c %s "$TMP/c1" 2>/dev/null || echo 0)" -lt $((2 << 20)) ] || fail "the cut GET got the whole body"
get big/cut.bin "$TMP/c2" >/dev/null || fail "the GET after the reset"
same_bytes "$TMP/src/big/cut.bin" "$TMP/c2"

# Over --inline-limit: streamed too, through a window of that size, part
# by part to the destination as it comes; the source's body sent once.
faults '{"bandwidth": 2000000}'
src_out0=$(stat_of "$A_URL" get bytes_out)
curl -sf --aws-sigv4 aws:amz:us-east-1:s3 --user gwkey:gwsecret -D "$TMP/large.h" -o "$TMP/l1" \
  -w '%{time_starttransfer} %{time_total}\n' "$GW_URL/bkt/big/large.bin" >"$TMP/tl" ||
  fail "GET of an object over the inline limit"
same_bytes "$TMP/src/big/large.bin" "$TMP/l1"
grep -qi '^x-ferry-answer: on_demand' "$TMP/large.h" || fail "large: $(grep -i x-ferry "$TMP/large.h")"
read -r first total <"$TMP/tl"
echo "over the inline limit: first byte at ${first}s of ${total}s"
awk -v f="$first" -v t="$total" 'BEGIN { exit !(t > 2 && f < t / 4) }' ||
  fail "the large object was not streamed: first byte at ${first}s of ${total}s"
src_out=$(( $(stat_of "$A_URL" get bytes_out) - src_out0 ))
[ "$src_out" -lt $(( 7 << 20 )) ] || fail "the source sent $src_out bytes for one 5 MiB copy"
faults '{}'
# Read again, from the destination: streamed in ranges. (That its first
# GET stops at the headers rather than after --inline-limit bytes is the
# conformance case GetAnnouncesTheInfoBeforeTheBody: the test server counts
# a dropped answer's bytes only when it was whole, so it cannot tell here.)
curl -sf --aws-sigv4 aws:amz:us-east-1:s3 --user gwkey:gwsecret -D "$TMP/large2.h" -o "$TMP/l2" \
  "$GW_URL/bkt/big/large.bin" || fail "second GET of the large object"
same_bytes "$TMP/src/big/large.bin" "$TMP/l2"
grep -qi '^x-ferry-answer: destination' "$TMP/large2.h" || fail "large, again: $(grep -i x-ferry "$TMP/large2.h")"

# 40 MiB in 16 MiB parts through a 4 MiB window, to a client reading at
# 20 MB/s and another that joins late (it reads the destination once the
# copy has landed there).
curl -sf --aws-sigv4 aws:amz:us-east-1:s3 --user gwkey:gwsecret --limit-rate 20M -o "$TMP/p1" \
  "$GW_URL/bkt/big/parts.bin" &
slow=$!
sleep 1
get big/parts.bin "$TMP/p2" >/dev/null || fail "the late client of a windowed copy"
wait $slow || fail "the slow client of a windowed copy"
same_bytes "$TMP/src/big/parts.bin" "$TMP/p1"
same_bytes "$TMP/src/big/parts.bin" "$TMP/p2"

# Each copy written to the destination and counted once.
for _ in $(seq 1 100); do [ "$(metric ferry_gateway_on_demand_copies_total)" = 4 ] && break; sleep 0.1; done
[ "$(metric ferry_gateway_on_demand_copies_total)" = 4 ] ||
  fail "on-demand copies: $(metric ferry_gateway_on_demand_copies_total), want 4"
for k in stream.bin cut.bin large.bin parts.bin; do
  awsp dst s3 cp "s3://bkt/big/$k" "$TMP/dst-$k" >/dev/null || fail "big/$k is not at the destination"
  same_bytes "$TMP/src/big/$k" "$TMP/dst-$k"
done
echo "gateway streaming: OK"
