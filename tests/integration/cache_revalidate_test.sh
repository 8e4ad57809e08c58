#!/usr/bin/env bash
# A revalidation writes the entry's new headers, not its body again:
# Python's http.server (a peer we did not write; Last-Modified, no ETag, no
# Cache-Control) serves 20 files of real text (Debian's copyright files of
# 4 KB or more), and curl asks ferry cache serve for each 50 times with
# Cache-Control: no-cache, so every repeat is a conditional request
# (If-Modified-Since) the origin answers 304. Before, each 304 appended
# the whole entry again (its compressed body too); now a refresh record of
# a few hundred bytes. Checked: every answer is the origin's bytes; 980
# refreshes; what the segments grew by is what the refresh records took,
# under 1 KB each; after a restart the entries answer from disk.
source "$(dirname "$0")/lib.sh"
need curl
source "$FERRY_SOURCE/tests/integration/cache_lib.sh"

mkdir -p "$TMP/site"
n=0
for f in /usr/share/doc/*/copyright; do
  [ "$(stat -c %s "$f")" -ge 4096 ] || continue
  cp "$f" "$TMP/site/f$n.txt"
  n=$((n + 1))
  [ "$n" = 20 ] && break
done
[ "$n" = 20 ] || skip "fewer than 20 copyright files of 4 KB in /usr/share/doc"
start_static_origin "$TMP/site"
start_cache_named cache --origin "$ORIGIN" --dir "$TMP/cache"

fetch_all() {  # fetch_all [CURL ARGS...]: every file once, compared with the origin's
  local i
  for i in $(seq 0 19); do
    curl -sf "$@" "$C/f$i.txt" -o "$TMP/got" || fail "f$i.txt: curl failed"
    cmp -s "$TMP/got" "$TMP/site/f$i.txt" || fail "f$i.txt: not the origin's bytes"
  done
}
fetch_all
wait_metric "$C" ferry_cache_disk_entries 20
before=$(metric "$C" ferry_cache_disk_segment_bytes)
for _ in $(seq 1 49); do fetch_all -H 'Cache-Control: no-cache'; done
refreshes=$(metric "$C" ferry_cache_refreshes_total)
written=$(metric "$C" ferry_cache_refresh_bytes_total)
after=$(metric "$C" ferry_cache_disk_segment_bytes)
[ "$refreshes" = 980 ] || fail "$refreshes refreshes for 980 revalidations"
[ "$((after - before))" = "$written" ] || fail "segments grew by $((after - before)) bytes, refresh records took $written"
[ "$written" -lt $((980 * 1024)) ] || fail "980 revalidations wrote $written bytes"
stored=$(metric "$C" ferry_cache_disk_bytes)
echo "980 revalidations wrote $written bytes ($((written / 980)) each); the 20 entries hold $stored bytes"

kill "$CACHE_PID"; wait "$CACHE_PID" 2>/dev/null || true
start_cache_named cache2 --origin "$ORIGIN" --dir "$TMP/cache"
[ "$(metric "$C" ferry_cache_disk_entries)" = 20 ] || fail "$(metric "$C" ferry_cache_disk_entries) entries after a restart"
fetch_all
echo "after a restart: 20 entries, the origin's bytes"
