#!/usr/bin/env bash
# Incremental sync for a cut-over, between two test S3 servers: the same
# migration run again copies only what is new or changed; with --since-last
# keys unchanged since the last completed job are skipped without a HEAD
# each; --delete removes exactly what the source no longer has, refuses past
# --max-delete, never touches what the filters leave out, and deletes
# nothing after a listing error.
source "$(dirname "$0")/lib.sh"
need curl

start_migrate_pair
N=300
seed_source $N 6 2000
sleep 1.1  # what changes next has a later Last-Modified second
run() {  # run NAME ARGS...: a migration bkt -> bkt, JSON in $TMP/NAME.json, exit code in RC
  local name=$1; shift
  RC=0
  "${M[@]}" s3://bkt s3://bkt --src-profile src --dst-profile dst --json "$@" \
    >"$TMP/$name.json" 2>"$TMP/$name.err" || RC=$?
}
field() { json_field "$2" <"$TMP/$1.json"; }
heads() { stat_of "$B_URL" head requests; }

run first
[ $RC = 0 ] || fail "first run: exit $RC: $(tail -2 "$TMP/first.err")"
[ "$(field first transferred)" = $N ] || fail "first run: $(tail -1 "$TMP/first.json")"

# The source changes: 5 new keys, 3 rewritten, 4 deleted.
sleep 1.1
for i in 1 2 3 4 5; do echo "new $i" >"$TMP/n$i"; awsp src s3 cp --quiet "$TMP/n$i" "s3://bkt/new/n$i"; done
for k in d00/o00000 d01/o00001 d02/o00002; do echo "rewritten" >"$TMP/rw"; awsp src s3 cp --quiet "$TMP/rw" "s3://bkt/$k"; done
for k in d03/o00003 d04/o00004 d05/o00005 d00/o00006; do awsp src s3 rm --quiet "s3://bkt/$k"; done
NOW=$((N + 5 - 4))

# Again, plainly: every key is looked at (a HEAD each), 8 copied.
h0=$(heads)
run plain --dry-run
[ "$(field plain transferred)" = 8 ] || fail "a plain rerun would copy $(field plain transferred), want 8"
plain_heads=$(( $(heads) - h0 ))
[ "$plain_heads" -ge "$NOW" ] || fail "a plain rerun made only $plain_heads HEADs"

# --since-last: the unchanged keys are skipped without a HEAD. (A slack of
# 1 s: this test's clocks are one clock.)
h0=$(heads)
run since --since-last --since-slack 1s
[ $RC = 0 ] || fail "--since-last: exit $RC: $(tail -2 "$TMP/since.err")"
/usr/bin/python3 - "$TMP/since.json" $NOW <<'PY' || fail "--since-last summary: $(tail -1 "$TMP/since.json")"
import json, sys
s = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
n = int(sys.argv[2])
assert s["state"] == "completed" and s["listed"] == n, s
assert s["transferred"] == 8 and s["skipped"] == n - 8, s
PY
since_heads=$(( $(heads) - h0 ))
[ "$since_heads" -le 16 ] || fail "--since-last still made $since_heads HEADs (a plain rerun: $plain_heads)"
grep -q "keys unchanged since job" "$TMP/since.err" || true
bucket_listing src >"$TMP/la"
grep -v "^d03/o00003 \|^d04/o00004 \|^d05/o00005 \|^d00/o00006 " <(bucket_listing dst) >"$TMP/lb"
diff "$TMP/la" "$TMP/lb" >/dev/null || fail "after --since-last: $(diff "$TMP/la" "$TMP/lb" | head -3)"

# --delete with --dry-run is refused before anything is made.
run dry --delete --max-delete 100 --dry-run
[ $RC = 1 ] && grep -q -- "--delete does not go with --dry-run" "$TMP/dry.err" ||
  fail "--dry-run --delete: exit $RC: $(cat "$TMP/dry.err")"

# --delete, refused: 4 would go, more than --max-delete 2. Nothing deleted, exit 6.
before=$(bucket_listing dst | wc -l)
run refused --delete --max-delete 2
[ $RC = 6 ] || fail "--delete past --max-delete: exit $RC, want 6"
grep -q -- "--delete: 4 objects at the destination are not at the source, more than --max-delete 2: nothing deleted" "$TMP/refused.err" ||
  fail "refusal message: $(cat "$TMP/refused.err")"
[ "$(bucket_listing dst | wc -l)" = "$before" ] || fail "a refused --delete deleted something"
/usr/bin/python3 -c "import json,sys; s=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); assert s['delete']=={'extra':4,'deleted':0,'kept_written_through_gateway':0,'refused':True,'max_delete':2}, s" "$TMP/refused.json" ||
  fail "refused summary: $(tail -1 "$TMP/refused.json")"

# --delete after a listing error: the destination answers every second
# listing with 403 (the job's own probe is the first). Nothing deleted.
curl -sf -XPOST "$B_URL/_admin/faults" -d '{"kind":"403","op":"list","every":2}' >/dev/null
run broken --delete --max-delete 100
curl -sf -XPOST "$B_URL/_admin/faults" -d '{}' >/dev/null
[ $RC = 1 ] || fail "--delete after a listing error: exit $RC, want 1: $(cat "$TMP/broken.err")"
grep -q -- "--delete: stopped" "$TMP/broken.err" || fail "no word of the stop: $(cat "$TMP/broken.err")"
[ "$(bucket_listing dst | wc -l)" = "$before" ] || fail "--delete deleted after a listing error"

# Filters: a destination key they leave out is never deleted.
echo keep >"$TMP/keep"; awsp dst s3 cp --quiet "$TMP/keep" s3://bkt/keep/me.txt
run filtered --delete --max-delete 10 --exclude 'keep/**'
[ $RC = 0 ] || fail "--delete: exit $RC: $(tail -2 "$TMP/filtered.err")"
/usr/bin/python3 -c "import json,sys; s=json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); assert s['delete']['deleted']==4 and not s['delete']['refused'], s" "$TMP/filtered.json" ||
  fail "--delete summary: $(tail -1 "$TMP/filtered.json")"
bucket_listing dst | grep -v '^keep/me.txt ' >"$TMP/lb"
diff "$TMP/la" "$TMP/lb" >/dev/null || fail "after --delete: $(diff "$TMP/la" "$TMP/lb" | head -3)"
bucket_listing dst >"$TMP/lc"  # whole: grep -q would stop reading it early
grep -q '^keep/me.txt ' "$TMP/lc" || fail "--delete removed a key the filters leave out"
echo "migrate_sync_test: ok ($plain_heads HEADs plain, $since_heads with --since-last)"
