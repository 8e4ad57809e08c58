#!/usr/bin/env bash
# ferry cache serve killed while it fills: segment files survive SIGKILL
# with no torn entry served. Many concurrent fills through the cache from
# the scripted origin (text, stored zstd; random bytes, stored as they are;
# a big object streaming to disk), then
#   1. the cache kills itself in the middle of an append
#      (FERRY_CRASH_AT=segment-append:N: half a record written), and
#   2. the cache is killed from outside (SIGKILL) at an arbitrary moment;
# after each, a restart finds and cuts off the torn tail (counted in
# ferry_cache_torn_records_total), and every path fetched again with curl
# is the origin's bytes, byte for byte (hits and refetches alike).
source "$(dirname "$0")/lib.sh"
need curl
source "$FERRY_SOURCE/tests/integration/cache_lib.sh"
start_origin

paths() {  # paths ROUND: what the fills ask for
  local i
  for i in $(seq 1 40); do echo "/text/r$1-$i"; echo "/blob/r$1-$i"; done
}
fill_all() {  # fill_all ROUND: every path at once, 16 at a time, in the background
  paths "$1" | xargs -P 16 -I{} curl -s --max-time 20 "$C{}" -o /dev/null &
  FILLS=$!
}
# check_all ROUND: every path again through the cache; prints the hits: the
# answers from an entry found on disk (HIT, or EXPIRED when the test has
# outlived the origin's max-age=60, as on a loaded machine, and the entry
# was found and revalidated).
check_all() {
  local p hits=0
  for p in $(paths "$1"); do
    curl -sf -D "$TMP/h" "$C$p" -o "$TMP/got" || fail "$p: no answer after the restart"
    curl -sf "$ORIGIN$p" | cmp -s - "$TMP/got" || fail "$p: not the origin's bytes after the crash"
    case "$(header "$TMP/h" x-cache)" in HIT | EXPIRED) hits=$((hits + 1)) ;; esac
  done
  echo "$hits"
}

# --- 1. a crash inside an append ------------------------------------------------------
FERRY_CRASH_AT=segment-append:30 start_cache_named crash1 --origin "$ORIGIN" --dir "$TMP/cache"
CRASHED=$CACHE_PID
fill_all 1
wait "$CRASHED" && rc=0 || rc=$?
[ "$rc" = 137 ] || fail "the cache was to die by SIGKILL at its 30th append; exit status $rc"
wait "$FILLS" || true
segs=$(find "$TMP/cache/segments" -name '*.seg' | wc -l)
start_cache_named restart1 --origin "$ORIGIN" --dir "$TMP/cache"
torn=$(metric "$C" ferry_cache_torn_records_total)
torn_bytes=$(metric "$C" ferry_cache_torn_bytes_total)
entries=$(metric "$C" ferry_cache_disk_entries)
[ "$torn" = 1 ] && [ "$torn_bytes" -gt 0 ] || fail "a record cut short mid-append: torn $torn ($torn_bytes bytes)"
[ "$entries" = 29 ] || fail "29 whole records appended before the crash, $entries entries found"
hits=$(check_all 1)
[ "$hits" -ge 29 ] || fail "only $hits hits for 29 entries kept"
echo "crash inside an append: $segs segment(s); torn tail of $torn_bytes bytes cut off; $entries entries whole," \
  "$hits of 80 paths hits, the rest refetched; every answer the origin's bytes"
# The tail was cut: another restart finds nothing torn.
kill "$CACHE_PID"; wait "$CACHE_PID" 2>/dev/null || true
start_cache_named restart1b --origin "$ORIGIN" --dir "$TMP/cache"
[ "$(metric "$C" ferry_cache_torn_records_total)" = 0 ] || fail "a torn tail found twice"
[ "$(metric "$C" ferry_cache_corrupt_entries_total)" = 0 ] || fail "corrupt entries after the torn tail was cut"
kill "$CACHE_PID"; wait "$CACHE_PID" 2>/dev/null || true

# --- 2. SIGKILL from outside, fills and a big object under way -------------------------
start_cache_named crash2 --origin "$ORIGIN" --dir "$TMP/cache" --max-object 512K
KILLED=$CACHE_PID
entries0=$(metric "$C" ferry_cache_disk_entries)  # round 1's
curl -s --max-time 20 "$C/trickle/big" -o /dev/null &  # 1 MB over 3.2 s, stored as frames as it comes
BIG=$!
fill_all 2
for _ in $(seq 1 100); do  # until some fills are on disk, and more are still coming
  [ "$(metric "$C" ferry_cache_disk_entries 2>/dev/null || echo 0)" -ge $((entries0 + 30)) ] && break
  sleep 0.05
done
at_kill=$(metric "$C" ferry_cache_disk_entries)
kill -9 "$KILLED"; wait "$KILLED" 2>/dev/null || true
wait "$FILLS" 2>/dev/null || true
wait "$BIG" 2>/dev/null || true
start_cache_named restart2 --origin "$ORIGIN" --dir "$TMP/cache" --max-object 512K
[ -z "$(ls -A "$TMP/cache/tmp")" ] || fail "files left in tmp/ after reopening: $(ls "$TMP/cache/tmp")"
[ "$(metric "$C" ferry_cache_disk_big_entries)" = 0 ] || fail "a big object half written was kept"
torn=$(metric "$C" ferry_cache_torn_records_total)
corrupt=$(metric "$C" ferry_cache_corrupt_entries_total)
hits=$(check_all 2)
curl -sf "$C/trickle/big" | cmp -s - <(curl -sf "$ORIGIN/trickle/big") || fail "the big object after the crash"
echo "SIGKILL during fills ($((at_kill - entries0)) of round 2's stored by then): $torn torn tail(s) and $corrupt damaged record(s) dropped; $hits of 80 paths hits," \
  "the rest refetched; every answer the origin's bytes"
# Round 1's entries are still there, whole.
hits=$(check_all 1)
[ "$hits" = 80 ] || fail "round 1: $hits of 80 hits after the second crash"
echo "cache_crash_test: ok"
