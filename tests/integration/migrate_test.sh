#!/usr/bin/env bash
# ferry migrate end to end between two test S3 servers and local
# directories: exact summaries, bytes and metadata compared with awscli,
# overwrite modes, filters, server-side copy within a bucket, the job
# commands, and bad input that must change nothing.
source "$(dirname "$0")/lib.sh"
need curl

start_migrate_pair
awsA() { awsp src "$@"; }
awsB() { awsp dst "$@"; }
# summary FILE FIELD: a field of the JSON summary (last line) of a run.
summary() { json_field "$2" <"$1"; }
expect_summary() {  # expect_summary FILE state listed transferred skipped failed
  local got
  got="$(summary "$1" state) $(summary "$1" listed) $(summary "$1" transferred) $(summary "$1" skipped) $(summary "$1" failed)"
  [ "$got" = "$2 $3 $4 $5 $6" ] || fail "$1: summary is '$got', want '$2 $3 $4 $5 $6'"
}

# --- a local tree -> server A (local source, S3 destination) -------------
SRC="$TMP/src"
mkdir -p "$SRC/docs" "$SRC/skip/deep" "$SRC/ünïcödé"
for i in $(seq 1 150); do head -c $((i * 37)) /dev/urandom >"$SRC/docs/file$i.txt"; done
for i in $(seq 1 20); do head -c $((i * 11)) /dev/urandom >"$SRC/skip/deep/x$i.bin"; done
echo "plus" >"$SRC/a+b c=d.txt"  # (a local "%" name is not an object: key_path.h; tested below)
echo "uni" >"$SRC/ünïcödé/ключ.txt"
make_file "$SRC/big.bin" $((13 << 20))  # multipart at 5M: 3 parts
LOCAL_N=$(find "$SRC" -type f | wc -l)

"${M[@]}" "$SRC" s3://bkt/ --dst-profile dst --json --multipart-threshold 5M --part-size 5M \
  >"$TMP/up.json" || fail "local -> s3 migration failed: $(cat "$TMP/up.json")"
head -1 "$TMP/up.json" | grep -q '"event":"job"' || fail "first line is not the job id"
expect_summary "$TMP/up.json" completed "$LOCAL_N" "$LOCAL_N" 0 0
[ "$(stat_of "$B_URL" complete requests)" = 1 ] || fail "big.bin was not one multipart upload"
# A file another tool named with a bare '%' is no key the local store can
# represent: it is not copied, and ferry says so instead of skipping it silently.
mkdir -p "$TMP/foreign"
echo "kept" >"$TMP/foreign/ok.txt"
echo "odd" >"$TMP/foreign/100%.txt"
"${M[@]}" "$TMP/foreign" "$TMP/foreign.out" --json >"$TMP/foreign.json" 2>"$TMP/foreign.err" ||
  fail "foreign-name migration failed: $(cat "$TMP/foreign.err")"
expect_summary "$TMP/foreign.json" completed 1 1 0 0
grep -q "'100%.txt' is not a name ferry can map to an object key" "$TMP/foreign.err" ||
  fail "no warning for the file it cannot list: $(cat "$TMP/foreign.err")"
grep -v '^{' "$TMP/foreign.json" && fail "--json output has a line that is not JSON"
same_bytes "$TMP/foreign/ok.txt" "$TMP/foreign.out/ok.txt"
# Metadata: a Content-Type guessed? No: local files carry none. Bytes: download and compare.
awsB s3 cp s3://bkt/big.bin "$TMP/big.back" >/dev/null
same_bytes "$SRC/big.bin" "$TMP/big.back"
awsB s3 cp "s3://bkt/ünïcödé/ключ.txt" "$TMP/uni.back" >/dev/null
same_bytes "$SRC/ünïcödé/ключ.txt" "$TMP/uni.back"

# --- objects with metadata and awkward keys, put on A with awscli ---------
echo '{"a":1}' >"$TMP/meta.json"
awsA s3api put-object --bucket bkt --key "meta/data.json" --body "$TMP/meta.json" \
  --content-type application/json --cache-control "max-age=60" --content-disposition 'attachment; filename="d.json"' \
  --content-language de --content-encoding identity --expires "Wed, 21 Oct 2037 07:28:00 GMT" \
  --metadata owner=alice,tier=gold >/dev/null
for k in "odd/with space" "odd/plus+sign" "odd/per%cent" "odd//double" "odd/ünï/日本"; do
  printf '%s' "$k" >"$TMP/k"
  awsA s3api put-object --bucket bkt --key "$k" --body "$TMP/k" --content-type text/plain >/dev/null
done
LONG="long/$(printf 'k%.0s' $(seq 1 1014))"  # 1024 bytes under copy/
echo long >"$TMP/k"; awsA s3api put-object --bucket bkt --key "$LONG" --body "$TMP/k" >/dev/null
for i in $(seq 1 300); do echo "n$i" >"$TMP/n$i"; done
awsA s3 cp --recursive --quiet "$TMP" s3://bkt/many/ --exclude '*' --include 'n*'
make_file "$TMP/a-big" $((11 << 20))
awsA s3 cp --quiet "$TMP/a-big" s3://bkt/bigA.bin
N=$(awsA s3api list-objects-v2 --bucket bkt --query 'length(Contents)' --output text)

# --- A -> B/copy/ (two endpoints), with parallel listing ------------------
"${M[@]}" s3://bkt s3://bkt/copy/ --src-profile src --dst-profile dst --json \
  --multipart-threshold 5M --part-size 5M --list-concurrency 4 >"$TMP/ab.json" ||
  fail "s3 -> s3 migration failed: $(grep -v progress "$TMP/ab.json" | tail -3)"
expect_summary "$TMP/ab.json" completed "$N" "$N" 0 0
JOB=$(summary "$TMP/ab.json" job)
listing() {  # listing PROFILE PREFIX: "key size" lines, sorted
  awsp "$1" s3api list-objects-v2 --bucket bkt --prefix "$2" --output json |
    /usr/bin/python3 -c "import json,sys; p='$2'; [print(o['Key'][len(p):], o['Size']) for o in sorted(json.load(sys.stdin).get('Contents',[]), key=lambda o:o['Key'].encode())]"
}
listing src "" | grep -v '^copy/' >"$TMP/la"
listing dst "copy/" >"$TMP/lb"
diff "$TMP/la" "$TMP/lb" >/dev/null || fail "keys/sizes differ between source and destination: $(diff "$TMP/la" "$TMP/lb" | head)"
awsB s3api head-object --bucket bkt --key copy/meta/data.json >"$TMP/head.json"
/usr/bin/python3 - "$TMP/head.json" <<'PY' || fail "metadata not preserved: $(cat "$TMP/head.json")"
import json, sys
h = json.load(open(sys.argv[1]))
assert h["ContentType"] == "application/json", h
assert h["CacheControl"] == "max-age=60", h
assert h["ContentDisposition"] == 'attachment; filename="d.json"', h
assert h["ContentLanguage"] == "de", h
assert h["ContentEncoding"] == "identity", h
assert "2037" in h.get("ExpiresString", h.get("Expires", "")), h
assert h["Metadata"] == {"owner": "alice", "tier": "gold"}, h["Metadata"]
PY
for k in "odd/with space" "odd/plus+sign" "odd/per%cent" "odd//double" "odd/ünï/日本"; do
  awsB s3api get-object --bucket bkt --key "copy/$k" "$TMP/got" >/dev/null
  [ "$(cat "$TMP/got")" = "$k" ] || fail "key '$k' arrived with the wrong bytes"
done
awsB s3 cp --quiet s3://bkt/copy/bigA.bin "$TMP/bigA.back"; same_bytes "$TMP/a-big" "$TMP/bigA.back"

# Again, unchanged: every key skipped, nothing put.
puts=$(stat_of "$B_URL" put requests)
"${M[@]}" s3://bkt s3://bkt/copy/ --src-profile src --dst-profile dst --json >"$TMP/again.json" ||
  fail "second run failed"
expect_summary "$TMP/again.json" completed "$N" 0 "$N" 0
[ "$(stat_of "$B_URL" put requests)" = "$puts" ] || fail "an unchanged object was copied again"
# --overwrite never skips too; always copies everything.
"${M[@]}" s3://bkt/many/ s3://bkt/copy/many/ --src-profile src --dst-profile dst --json --overwrite never >"$TMP/never.json"
expect_summary "$TMP/never.json" completed 300 0 300 0
"${M[@]}" s3://bkt/many/ s3://bkt/copy/many/ --src-profile src --dst-profile dst --json --overwrite always >"$TMP/always.json"
expect_summary "$TMP/always.json" completed 300 300 0 0
# A changed source object is copied again under "changed".
echo changed >"$TMP/n1"; awsA s3 cp --quiet "$TMP/n1" s3://bkt/many/n1
"${M[@]}" s3://bkt/many/ s3://bkt/copy/many/ --src-profile src --dst-profile dst --json >"$TMP/changed.json"
expect_summary "$TMP/changed.json" completed 300 1 299 0
awsB s3 cp --quiet s3://bkt/copy/many/n1 "$TMP/n1.back"; same_bytes "$TMP/n1" "$TMP/n1.back"

# --- filters ---------------------------------------------------------------
"${M[@]}" "$SRC" "$TMP/filtered" --json --include '*.txt' --exclude 'docs/file1*' >"$TMP/f.json"
want=$(cd "$SRC" && find . -name '*.txt' ! -path './docs/file1*' | wc -l)
expect_summary "$TMP/f.json" completed "$want" "$want" 0 0
[ "$(find "$TMP/filtered" -type f ! -name '.*' | wc -l)" = "$want" ] || fail "filtered tree has the wrong file count"
"${M[@]}" "$SRC" "$TMP/sized" --json --min-size 1000 --max-size 2000 >"$TMP/s.json"
want=$(find "$SRC" -type f -size +999c -size -2001c | wc -l)
expect_summary "$TMP/s.json" completed "$want" "$want" 0 0
"${M[@]}" "$SRC" "$TMP/newer" --json --newer-than 1h >"$TMP/n.json"
expect_summary "$TMP/n.json" completed "$LOCAL_N" "$LOCAL_N" 0 0
"${M[@]}" "$SRC" "$TMP/older" --json --older-than 1h >"$TMP/o.json"
expect_summary "$TMP/o.json" completed 0 0 0 0

# --- S3 -> local: the tree comes back byte for byte -----------------------
"${M[@]}" s3://bkt/ "$TMP/down" --dst-profile dst --src-profile dst --json --exclude 'copy/**' \
  --multipart-threshold 5M --part-size 5M >"$TMP/down.json" || fail "s3 -> local failed"
expect_summary "$TMP/down.json" completed "$LOCAL_N" "$LOCAL_N" 0 0
diff <(tree_digest "$SRC") <(tree_digest "$TMP/down") >/dev/null || fail "downloaded tree differs"

# --- server-side copy within one bucket -------------------------------------
copies=$(stat_of "$A_URL" copy requests); gets=$(stat_of "$A_URL" get requests)
"${M[@]}" s3://bkt/many/ s3://bkt/ss/ --src-profile src --dst-profile src --json >"$TMP/ss.json"
expect_summary "$TMP/ss.json" completed 300 300 0 0
[ $(( $(stat_of "$A_URL" copy requests) - copies )) = 300 ] || fail "not server-side copies"
[ "$(stat_of "$A_URL" get requests)" = "$gets" ] || fail "server-side copy read objects through ferry"

# --- a job split by prefix into parallel jobs; two processes at once on one
# state store ------------------------------------------------------------------
"${M[@]}" s3://bkt s3://bkt/sp/ --src-profile src --dst-profile dst --json --split \
  --split-parallel 3 --exclude 'many/n1*' >"$TMP/split.json" 2>"$TMP/split.err" || fail "split job failed: $(tail -2 "$TMP/split.err")"
want=$(( $(listing src "" | wc -l) - 111 ))  # less many/n1, n10-n19, n100-n199
/usr/bin/python3 - "$TMP/split.json" "$want" <<'PY' || fail "split: $(tail -1 "$TMP/split.json")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
s, want = lines[-1], int(sys.argv[2])
jobs = [l["job"] for l in lines if l.get("event") == "job"]
assert len(jobs) >= 5 and s["jobs"] == jobs, (jobs, s)
assert s["state"] == "completed" and s["listed"] == want and s["transferred"] == want, s
PY
listing dst "sp/" >"$TMP/lsplit"
[ "$(wc -l <"$TMP/lsplit")" = "$want" ] || fail "split copied $(wc -l <"$TMP/lsplit") objects"
"${M[@]}" "$SRC" "$TMP/p1" --json >"$TMP/p1.json" & P1=$!
"${M[@]}" s3://bkt/many/ "$TMP/p2" --src-profile src --json >"$TMP/p2.json" & P2=$!
wait $P1 || fail "first of two concurrent jobs failed"
wait $P2 || fail "second of two concurrent jobs failed"
expect_summary "$TMP/p1.json" completed "$LOCAL_N" "$LOCAL_N" 0 0
expect_summary "$TMP/p2.json" completed 300 300 0 0

# --- --bwlimit and --tps-limit hold (lower bounds only: the machine is noisy)
mkdir -p "$TMP/bw"; head -c $((3 << 20)) /dev/urandom >"$TMP/bw/blob"
t0=$(date +%s%N)
"${M[@]}" "$TMP/bw" s3://bkt/bw/ --dst-profile dst --json --bwlimit 1M >"$TMP/bw.json"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
expect_summary "$TMP/bw.json" completed 1 1 0 0
[ "$ms" -ge 1800 ] || fail "3 MiB at --bwlimit 1M took only ${ms} ms"
t0=$(date +%s%N)
"${M[@]}" s3://bkt/many/ s3://bkt/tps/ --src-profile src --dst-profile dst --json --tps-limit 100 >"$TMP/tps.json"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
expect_summary "$TMP/tps.json" completed 300 300 0 0
# 600+ requests at 100/s with a burst of 100: at least 5 s.
[ "$ms" -ge 4500 ] || fail "600 requests at --tps-limit 100 took only ${ms} ms"

# --- Ctrl-C: exit 130, the job is left interrupted and resumes exactly ------
mkdir -p "$TMP/int"
for i in $(seq 1 20); do head -c $((256 << 10)) /dev/urandom >"$TMP/int/f$i"; done
"${M[@]}" "$TMP/int" s3://bkt/int/ --dst-profile dst --json --bwlimit 1M >"$TMP/int.json" &
RUN=$!
# Ctrl-C once the job has listed something (a sanitizer build on a busy
# machine can take more than a second to get there), then at once.
IJOB=
for _ in $(seq 1 300); do
  [ -z "$IJOB" ] && [ -s "$TMP/int.json" ] && IJOB=$(head -1 "$TMP/int.json" | json_field job 2>/dev/null || true)
  if [ -n "$IJOB" ] && "${M[@]}" status "$IJOB" --json 2>/dev/null |
      /usr/bin/python3 -c "import json,sys; sys.exit(0 if json.load(sys.stdin)['listed'] > 0 else 1)"; then
    break
  fi
  sleep 0.1
done
[ -n "$IJOB" ] || fail "the interrupted run never printed its job"
kill -INT $RUN
rc=0; wait $RUN || rc=$?
[ $rc = 130 ] || fail "Ctrl-C gave exit $rc, want 130"
"${M[@]}" status "$IJOB" --json | /usr/bin/python3 -c "
import json,sys; j=json.load(sys.stdin)
assert j['state']=='interrupted' and j['runner']=='' and 0 < j['listed'], j
assert j['transferred'] < 20, j" || fail "state after Ctrl-C"
"${M[@]}" resume "$IJOB" --json >"$TMP/int2.json" || fail "resume after Ctrl-C failed"
/usr/bin/python3 - "$TMP/int2.json" <<'PY' || fail "after Ctrl-C and resume: $(tail -1 "$TMP/int2.json")"
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
assert s["state"] == "completed" and s["listed"] == 20, s
assert s["transferred"] + s["skipped"] == 20 and s["failed"] == 0, s
PY
[ "$(listing dst int/ | wc -l)" = 20 ] || fail "not every file arrived after Ctrl-C and resume"

# --- cancel: a running job stops (exit 4) and aborts its uploads; a job
# nobody runs is cancelled at once ----------------------------------------------
make_file "$TMP/int/zbig" $((12 << 20))
"${M[@]}" "$TMP/int" s3://bkt/cancel/ --dst-profile dst --json --bwlimit 2M \
  --multipart-threshold 5M --part-size 5M >"$TMP/c.json" &
RUN=$!
for _ in $(seq 1 100); do [ -s "$TMP/c.json" ] && break; sleep 0.1; done
CJOB=$(head -1 "$TMP/c.json" | json_field job)
for _ in $(seq 1 100); do
  [ "$(curl -sf "$B_URL/_admin/stats" | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['storage']['multipart_uploads'])")" -gt 0 ] && break
  sleep 0.1
done
"${M[@]}" cancel "$CJOB" | grep -q cancelling || fail "cancel of a running job"
rc=0; wait $RUN || rc=$?
[ $rc = 4 ] || fail "a cancelled run exited $rc, want 4"
"${M[@]}" status "$CJOB" --json | grep -q '"state":"cancelled"' || fail "job not cancelled"
open=$(curl -sf "$B_URL/_admin/stats" | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['storage']['multipart_uploads'])")
[ "$open" = 0 ] || fail "$open multipart uploads left after cancel"
if "${M[@]}" resume "$CJOB" 2>"$TMP/r.err"; then fail "resumed a cancelled job"; fi
grep -q 'cancelled' "$TMP/r.err" || fail "resume of a cancelled job said: $(cat "$TMP/r.err")"
"${M[@]}" cancel "$IJOB" >/dev/null 2>&1 && fail "cancelled a completed job"
crash_job=$( { FERRY_CRASH_AT=list-page:1 "${M[@]}" "$TMP/int" "$TMP/never" --json || true; } | head -1 | json_field job)
"${M[@]}" cancel "$crash_job" | grep -q 'cancelled' || fail "cancel of a job nobody runs"
"${M[@]}" status "$crash_job" --json | grep -q '"state":"cancelled"' || fail "dead job not cancelled"

# --- on a terminal: the live progress line ---------------------------------
if command -v script >/dev/null; then
  # script(1) gives ferry a pseudo-terminal; the progress line is redrawn with \r.
  script -qec "$(printf '%q ' "${M[@]}" s3://bkt/many/ s3://bkt/tty/ --src-profile src --dst-profile dst --tps-limit 200)" \
    /dev/null >"$TMP/tty.out" </dev/null || fail "migrate on a terminal failed"
  tr '\r' '\n' <"$TMP/tty.out" | grep -Eq 'listed [0-9]+.* done [0-9]+ .* in flight [0-9]+ .* obj/s .*/s .* ETA' ||
    fail "no progress line on a terminal: $(tr '\r' '\n' <"$TMP/tty.out" | tail -3)"
  grep -q 'completed: listed 300, transferred 300' "$TMP/tty.out" || fail "no summary on a terminal"
fi

# --- dry run copies nothing --------------------------------------------------
"${M[@]}" "$SRC" "$TMP/dry" --json --dry-run >"$TMP/dry.json"
expect_summary "$TMP/dry.json" completed "$LOCAL_N" "$LOCAL_N" 0 0
[ -z "$(find "$TMP/dry" -type f 2>/dev/null)" ] || fail "dry run wrote files"

# --- job commands ---------------------------------------------------------------
"${M[@]}" status "$JOB" --json | /usr/bin/python3 -c "
import json,sys; j=json.load(sys.stdin)
assert j['state']=='completed' and j['listed']==$N and j['transferred']==$N and j['pending']==0, j"
"${M[@]}" status | grep -q '^state *completed' || fail "status of the newest job"
# Finished jobs are in the archive: `list` shows the jobs still at work,
# `list --all` every one, and status still reads an archived one.
"${M[@]}" list >"$TMP/list.txt"; "${M[@]}" list --all >"$TMP/list-all.txt"
grep -q "$JOB" "$TMP/list.txt" && fail "list shows the finished (archived) $JOB"
grep -q "$JOB" "$TMP/list-all.txt" || fail "list --all misses $JOB"
[ "$("${M[@]}" list --all --json | wc -l)" -ge 10 ] || fail "list --all --json"
[ "$("${M[@]}" status "$JOB" --json | json_field archived)" = True ] || fail "status of an archived job"
if [ -n "${PG_STATE:-}" ]; then
  # The usual PG* variables fill in what a bare postgresql:// leaves out.
  declare -A pg=()
  for kv in $PG_STATE; do pg[${kv%%=*}]=${kv#*=}; done
  PGHOST=${pg[host]} PGPORT=${pg[port]} PGUSER=${pg[user]} PGDATABASE=${pg[dbname]} \
    "$FERRY" migrate --state postgresql:// list --all >"$TMP/list-env.txt" ||
    fail "--state postgresql:// with PG* variables failed"
  cmp -s "$TMP/list-all.txt" "$TMP/list-env.txt" || fail "the PG* variables named another database"
fi
"${M[@]}" resume "$JOB" | grep -q 'already completed' || fail "resume of a completed job"
"${M[@]}" dlq "$JOB" >"$TMP/dlq"; [ ! -s "$TMP/dlq" ] || fail "dlq of a clean job is not empty"

# --- bad input: one line on stderr, non-zero, nothing created ---------------------
jobs_before=$("${M[@]}" list --all --json | wc -l)
bad() {  # bad WANT-REGEX CMD...: fails with one stderr line matching, no job made
  local want=$1; shift
  if "$@" >"$TMP/bad.out" 2>"$TMP/bad.err"; then fail "accepted: $*"; fi
  [ "$(wc -l <"$TMP/bad.err")" = 1 ] || fail "not one line for '$*': $(cat "$TMP/bad.err")"
  grep -Eiq "$want" "$TMP/bad.err" || fail "'$*' said: $(cat "$TMP/bad.err")"
}
bad 'no job mnope' "${M[@]}" status mnope
bad 'no job mnope' "${M[@]}" resume mnope
bad 'no job mnope' "${M[@]}" dlq mnope
bad 'no job mnope' "${M[@]}" cancel mnope
bad 'inside the source' "${M[@]}" "$SRC" "$SRC/sub"
bad 'is the source' "${M[@]}" "$SRC" "$SRC/"
bad 'inside the source' "${M[@]}" s3://bkt/a s3://bkt/a/b --src-profile src --dst-profile src
bad 'inside the destination' "${M[@]}" s3://bkt/a/x s3://bkt/a --src-profile src --dst-profile src
bad 'no such|not found|does not exist' "${M[@]}" "$TMP/absent" "$TMP/x"
[ ! -e "$TMP/x" ] || fail "a failed migrate created its destination"
bad 'NoSuchBucket|no such bucket' "${M[@]}" s3://nobucket "$TMP/y" --src-profile src
bad 'profile' "${M[@]}" s3://bkt "$TMP/y" --src-profile nosuchprofile
bad 'glob|\[' "${M[@]}" "$SRC" "$TMP/y" --include 'a[b'
bad 'overwrite' "${M[@]}" "$SRC" "$TMP/y" --overwrite sometimes
bad 'newer-than' "${M[@]}" "$SRC" "$TMP/y" --newer-than yesterdayish
bad 'detach.*split|split.*detach' "${M[@]}" "$SRC" "$TMP/y" --detach --split
bad 'lease' "$FERRY" worker --state "$STATE" --once --lease 0s
# A PostgreSQL that is not there, or a malformed connection string: one
# line each, and the password never shown.
bad 'cannot connect to PostgreSQL' "$FERRY" migrate --state "postgres://u:hunter2@127.0.0.1:1/db" list
bad 'cannot connect to PostgreSQL' "$FERRY" worker --state "postgres://u:hunter2@127.0.0.1:1/db" --once
bad 'connection string' "$FERRY" migrate --state "postgres:host=127.0.0.1 port" "$SRC" "$TMP/y"
! grep -q hunter2 "$TMP/bad.err" || fail "a PostgreSQL password was printed"
bad 'connection string' "$FERRY" migrate --state "postgres://u:50%zzoff@127.0.0.1:1/db" list
! grep -q zzoff "$TMP/bad.err" || fail "a malformed connection string's password was printed"
[ ! -e "$TMP/y" ] || fail "a failed migrate created its destination"
SECRETS=$AWS_SHARED_CREDENTIALS_FILE
AWS_SHARED_CREDENTIALS_FILE="$TMP" bad 'credentials|read|directory' "${M[@]}" s3://bkt "$TMP/y" --src-profile src
[ "$("${M[@]}" list --all --json | wc -l)" = "$jobs_before" ] || fail "bad input created a job"
! grep -rq "$TEST_SECRET" "$TMP"/*.json "$TMP/bad.err" || fail "a secret was printed"

# A corrupt state file is reported, never reset.
mkdir -p "$TMP/cstate"; head -c 8192 /dev/urandom >"$TMP/cstate/migrate.db"
sum=$(md5sum <"$TMP/cstate/migrate.db")
bad 'corrupt|not a ferry state|not a database' "$FERRY" migrate --state "$TMP/cstate" "$SRC" "$TMP/z"
bad 'corrupt|not a ferry state|not a database' "$FERRY" migrate --state "$TMP/cstate" list
[ "$(md5sum <"$TMP/cstate/migrate.db")" = "$sum" ] || fail "the corrupt state file was changed"
echo "migrate_test: ok"
