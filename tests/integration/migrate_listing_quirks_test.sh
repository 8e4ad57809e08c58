#!/usr/bin/env bash
# The listing against ferry's test server answering like broken servers
# (ferry-test-s3 --list-quirk, modelled on s3rver 3.7): a delimited listing
# that forgets prefixes, start-after ignored, keys out of byte order. Each
# time the job lists every key exactly once, or falls back to one flat
# listing with a one-line warning. Last, keys out of order that only show
# after a crash, mid-job: the job relists, its counters stay exact, and no
# object is uploaded twice.
source "$(dirname "$0")/lib.sh"
need curl

start_migrate_pair
N=3000
make_prefix_tree "$TMP/tree" $N
# Where walk order and byte order part ("x=y&z/a/..." walked before
# "x=y&z/a-1" and "x=y&z/a.txt"), late in the key space.
mkdir -p "$TMP/tree/x=y&z/a"
for i in $(seq 1 30); do echo "$i" >"$TMP/tree/x=y&z/a/x$i"; done
echo 1 >"$TMP/tree/x=y&z/a-1"; echo 2 >"$TMP/tree/x=y&z/a.txt"
N=$((N + 32))
"${M[@]}" "$TMP/tree" s3://bkt/ --dst-profile src --json -q >"$TMP/seed.json" || fail "seeding failed"
[ "$(json_field listed <"$TMP/seed.json")" = $N ] || fail "seed listed $(json_field listed <"$TMP/seed.json")"
bucket_listing src >"$TMP/la"

quirks() { curl -sf -XPOST "$A_URL/_admin/faults" -d "{\"list_quirks\": [$1]}" >/dev/null || fail "quirks $1"; }
puts() { echo $(( $(stat_of "$B_URL" put requests) - $(stat_of "$B_URL" put errors) )); }
# check_copy PREFIX SUMMARY: exact summary, destination under PREFIX equals the source.
check_copy() {
  /usr/bin/python3 - "$2" $N <<'PY' || fail "summary of $1: $(tail -1 "$2")"
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
n = int(sys.argv[2])
assert s["state"] == "completed" and s["listed"] == n and s["failed"] == 0, s
assert s["transferred"] + s["skipped"] == n, s
PY
  awsp dst s3api list-objects-v2 --bucket bkt --prefix "$1" --output json |
    /usr/bin/python3 -c "import json,sys; p=sys.argv[1]; [print(o['Key'][len(p):], o['Size'], o['ETag']) for o in sorted(json.load(sys.stdin).get('Contents', []), key=lambda o: o['Key'])]" "$1" >"$TMP/lb"
  diff "$TMP/la" "$TMP/lb" >/dev/null || fail "$1 differs from the source: $(diff "$TMP/la" "$TMP/lb" | head -3)"
}

# run_with QUIRK [WANT_WARNING [RELIST]]: a whole job with the quirk on from
# the start; RELIST: the disorder may show only after pages were committed.
run_with() {
  quirks "\"$1\""
  local before; before=$(puts)
  "${M[@]}" s3://bkt "s3://bkt/$1/" --src-profile src --dst-profile dst --json --list-chunk 100 \
    >"$TMP/$1.json" 2>"$TMP/$1.err" || fail "$1: $(tail -2 "$TMP/$1.err")"
  check_copy "$1/" "$TMP/$1.json"
  [ $(( $(puts) - before )) = $N ] || fail "$1: $(( $(puts) - before )) PUTs for $N objects"
  if [ -n "$2" ]; then
    grep -q "warning: s3://bkt: .*$2.*one flat listing instead of key ranges" "$TMP/$1.err" ||
      fail "$1: no warning about '$2': $(cat "$TMP/$1.err")"
    [ "$(grep -c warning "$TMP/$1.err")" = 1 ] || fail "$1: $(cat "$TMP/$1.err")"
    if [ -z "${3:-}" ] && grep -q "listed again" "$TMP/$1.err"; then
      fail "$1: should be found before anything was listed: $(cat "$TMP/$1.err")"
    fi
  else
    grep -q warning "$TMP/$1.err" && fail "$1: unexpected warning: $(cat "$TMP/$1.err")"
  fi
  return 0
}
run_with forget-prefixes ""
run_with ignore-start-after "start-after"
run_with unordered "byte order" relist

# Mid-job: the first run lists in byte order and is killed after its 6th
# page; the server then answers in walk order. The resumed run finds the
# disorder in a range it had not listed yet, falls back, and relists what
# was listed before: counters start over exact, and nothing already copied
# is uploaded again.
quirks ""
before=$(puts)
rc=0
FERRY_CRASH_AT=list-page:6 "${M[@]}" s3://bkt s3://bkt/mid/ --src-profile src --dst-profile dst --json \
  --list-chunk 100 >"$TMP/crash.json" 2>"$TMP/crash.err" || rc=$?
[ $rc = 137 ] || fail "the first run should die by SIGKILL, exit $rc: $(tail -2 "$TMP/crash.err")"
JOB=$(head -1 "$TMP/crash.json" | json_field job)
quirks '"unordered"'
"${M[@]}" resume "$JOB" --json >"$TMP/mid.json" 2>"$TMP/mid.err" || fail "resume: $(tail -2 "$TMP/mid.err")"
grep -q "warning: s3://bkt: .*byte order.*one flat listing.*listed again" "$TMP/mid.err" ||
  fail "no relisting warning: $(cat "$TMP/mid.err")"
check_copy mid/ "$TMP/mid.json"
[ $(( $(puts) - before )) = $N ] || fail "mid-job fallback: $(( $(puts) - before )) PUTs for $N objects"
# Disorder no page shows: s3rver walks "h/d000/" before "h/d000.txt", so a
# listing by start-after never returns h/d000.txt at all (every key after
# it in the walk is above it). The delimiter listing of h/ does show it:
# the first page passes it over, and the job falls back before committing
# anything. verify does the same and sorts on disk.
awsp src s3 mb s3://hidden >/dev/null
mkdir -p "$TMP/hidden/h/d000"
for i in $(seq 1 400); do echo "$i" >"$TMP/hidden/h/d000/o$(printf %04d "$i")"; done
echo txt >"$TMP/hidden/h/d000.txt"
quirks ""
"${M[@]}" "$TMP/hidden" s3://hidden/ --dst-profile src -q || fail "seeding hidden/ failed"
quirks '"unordered"'
"${M[@]}" s3://hidden s3://bkt/hidden/ --src-profile src --dst-profile dst --json --list-chunk 100 \
  >"$TMP/hidden.json" 2>"$TMP/hidden.err" || fail "hidden: $(tail -2 "$TMP/hidden.err")"
grep -q 'warning: s3://hidden: key "h/d000.txt", which its delimiter listing shows, is missing' "$TMP/hidden.err" ||
  fail "hidden: no warning: $(cat "$TMP/hidden.err")"
grep -q "listed again" "$TMP/hidden.err" && fail "hidden: found only after committing: $(cat "$TMP/hidden.err")"
[ "$(json_field listed <"$TMP/hidden.json")" = 401 ] || fail "hidden: $(tail -1 "$TMP/hidden.json")"
awsp dst s3api head-object --bucket bkt --key hidden/h/d000.txt >/dev/null || fail "h/d000.txt was not copied"
RC=0
"$FERRY" migrate verify s3://hidden s3://bkt/hidden/ --src-profile src --dst-profile dst --json \
  >"$TMP/vhidden.json" 2>"$TMP/vhidden.err" || RC=$?
[ $RC = 0 ] || fail "verify hidden: exit $RC: $(cat "$TMP/vhidden.err")"
grep -q "sorted on disk" "$TMP/vhidden.err" || fail "verify hidden: no warning: $(cat "$TMP/vhidden.err")"
/usr/bin/python3 -c "import json,sys; v=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); assert v['matched']==401 and v['sorted_on_disk'], v" "$TMP/vhidden.json" ||
  fail "verify hidden: $(tail -1 "$TMP/vhidden.json")"
echo "migrate_listing_quirks_test: ok"
