#!/usr/bin/env bash
# What real clients and a real static origin get from the cache:
# - a plain static origin (python3 -m http.server: Last-Modified, no
#   Cache-Control) is cached by default through heuristic freshness, its
#   small pages stored once compressed behind their fills;
# - gzip-only and br clients get a variant made from the stored zstd entry
#   (decoded by gzip -d and brotli -d to the origin's bytes), zstd clients
#   the stored bytes, curl --compressed whichever it asks for;
# - each coding has its own ETag: 304 for it, ranges from identity;
# - the per-coding metrics count what was sent.
source "$(dirname "$0")/lib.sh"
need curl
need gzip
need brotli
need zstd
source "$FERRY_SOURCE/tests/integration/cache_lib.sh"

# --- a plain static origin: real web files, Last-Modified only -----------------
mkdir -p "$TMP/site"
cp /usr/share/javascript/jquery/jquery.js "$TMP/site/" 2>/dev/null || head -c 300000 /usr/share/common-licenses/GPL-3 >"$TMP/site/jquery.js"
cp /usr/share/common-licenses/GPL-3 "$TMP/site/gpl.txt"
for i in 1 2 3; do sed "s/GNU/GNU $i/" /usr/share/common-licenses/GPL-3 >"$TMP/site/page$i.html"; done
touch -d '30 days ago' "$TMP/site"/*
(cd "$TMP/site" && exec /usr/bin/python3 -m http.server --bind 127.0.0.1 0 >"$TMP/static.log" 2>&1) &
PIDS+=($!)
for _ in $(seq 1 50); do grep -q "port" "$TMP/static.log" 2>/dev/null && break; sleep 0.1; done
STATIC_PORT=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$TMP/static.log" | head -1)
[ -n "$STATIC_PORT" ] || fail "python3 -m http.server did not start: $(cat "$TMP/static.log")"
STATIC="http://127.0.0.1:$STATIC_PORT"
wait_port "$STATIC_PORT"

start_cache_named static --origin "$STATIC" --dir "$TMP/cache-static"   # default flags
for f in jquery.js gpl.txt page1.html page2.html page3.html; do
  curl -sf "$STATIC/$f" -o "$TMP/$f.orig" || fail "origin $f"
  curl -sf "$C/$f" -o /dev/null || fail "first $f"
  curl -sf -D "$TMP/h" "$C/$f" -o "$TMP/$f.got" || fail "second $f"
  [ "$(header "$TMP/h" x-cache)" = HIT ] || fail "$f: a static origin's file is not cached by default: $(header "$TMP/h" x-cache)"
  [ -n "$(header "$TMP/h" age)" ] || fail "$f: no Age on a heuristic hit"
  cmp -s "$TMP/$f.orig" "$TMP/$f.got" || fail "$f: the hit differs from the origin"
done
# The 35 KB pages were compressed behind their fills (default
# --compress-behind 64K): answered as they came, on disk once compressed.
wait_metric "$C" ferry_cache_disk_entries 5
[ "$(metric "$C" ferry_cache_encode_behind_total)" = 4 ] ||
  fail "compressed behind their fills: $(metric "$C" ferry_cache_encode_behind_total), not the 4 small pages"
[ "$(metric "$C" ferry_cache_encode_batches_total)" -ge 1 ] || fail "no encoder turns counted"
curl -sf -D "$TMP/h" -H 'Accept-Encoding: zstd' "$C/page2.html" -o "$TMP/page2.zst" || fail "zstd page2"
[ "$(header "$TMP/h" content-encoding)" = zstd ] || fail "page2.html: stored, yet not zstd: $(header "$TMP/h" content-encoding)"
zstd -dcq "$TMP/page2.zst" | cmp -s - "$TMP/page2.html.orig" || fail "page2.html: the zstd bytes differ"
[ "$(metric "$C" ferry_cache_heuristic_entries_total)" = 5 ] ||
  fail "heuristic entries: $(metric "$C" ferry_cache_heuristic_entries_total)"
[ "$(metric "$C" ferry_cache_heuristic_hits_total)" -ge 5 ] || fail "heuristic hits not counted"
kill "$CACHE_PID"; wait "$CACHE_PID" 2>/dev/null || true
# --heuristic-fraction 0 and no --default-ttl: nothing kept, as before.
start_cache_named noheur --origin "$STATIC" --dir "$TMP/cache-noheur" --heuristic-fraction 0
curl -sf "$C/gpl.txt" -o /dev/null
curl -sf -D "$TMP/h" "$C/gpl.txt" -o /dev/null
[ "$(header "$TMP/h" x-cache)" = MISS ] || fail "--heuristic-fraction 0 still cached: $(header "$TMP/h" x-cache)"
kill "$CACHE_PID"; wait "$CACHE_PID" 2>/dev/null || true

# --- codings at the client hop ----------------------------------------------------
# The static origin (Last-Modified, no ETag) for any host, and the scripted
# one (ETag, max-age) for the host "scripted".
start_origin
# Compressed before each fill is answered, so a client right after it gets a coded answer.
start_cache_named codings --origin "$STATIC" --origin-host-map "scripted=$ORIGIN" --dir "$TMP/cache-codings" \
  --compress-behind 0
curl -sf "$ORIGIN/text/a" -o "$TMP/text-a.orig"
check_coding() {  # check_coding PATH ORIGINAL ACCEPT CODING DECODER [HOST]
  local F=$1 ORIG=$2 accept=$3 coding=$4 dec=$5 host=${6:-localhost}
  curl -sf -H "Host: $host" "$C/$F" -o /dev/null  # filled (or a hit)
  local etag; etag=$(curl -sfI -H "Host: $host" "$C/$F" | grep -i '^etag:' | cut -d' ' -f2- | tr -d '\r' || true)
  curl -sf -D "$TMP/h.$coding" -H "Host: $host" -H "Accept-Encoding: $accept" "$C/$F" -o "$TMP/body.$coding" ||
    fail "$coding GET"
  [ "$(header "$TMP/h.$coding" content-encoding)" = "$coding" ] ||
    fail "Accept-Encoding '$accept' got '$(header "$TMP/h.$coding" content-encoding)', not $coding"
  [ "$(header "$TMP/h.$coding" vary)" = Accept-Encoding ] || fail "$coding: no Vary"
  $dec <"$TMP/body.$coding" | cmp -s - "$ORIG" || fail "$coding: does not decode to the origin's bytes"
  local size; size=$(stat -c %s "$TMP/body.$coding")
  [ "$size" -lt $(( $(stat -c %s "$ORIG") / 2 )) ] || fail "$coding: $size bytes is not compressed"
  [ "$(header "$TMP/h.$coding" content-length)" = "$size" ] || fail "$coding: Content-Length"
  local tag; tag=$(header "$TMP/h.$coding" etag || true)
  [ -z "$etag" ] || [ "$tag" != "$etag" ] || fail "$coding: the same ETag as identity"
  if [ -n "$tag" ]; then
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $host" -H "Accept-Encoding: $accept" -H "If-None-Match: $tag" "$C/$F")
    [ "$code" = 304 ] || fail "$coding: If-None-Match its own ETag gave $code"
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $host" -H "Accept-Encoding: $accept" -H "If-None-Match: $etag" "$C/$F")
    [ "$code" = 200 ] || fail "$coding: If-None-Match the identity ETag gave $code"
  fi
  if [ -n "$(header "$TMP/h.$coding" last-modified || true)" ]; then
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $host" -H "Accept-Encoding: $accept" \
      -H "If-Modified-Since: $(date -u -R -d 'now' | sed 's/+0000/GMT/')" "$C/$F")
    [ "$code" = 304 ] || fail "$coding: If-Modified-Since now gave $code"
  fi
  # A range, whatever the client accepts, is identity bytes.
  curl -sf -D "$TMP/hr" -H "Host: $host" -H "Accept-Encoding: $accept" -r 1000-5999 "$C/$F" -o "$TMP/range.$coding" ||
    fail "$coding range"
  [ -z "$(header "$TMP/hr" content-encoding || true)" ] || fail "$coding: a range came coded"
  dd if="$ORIG" bs=1 skip=1000 count=5000 status=none | cmp -s - "$TMP/range.$coding" || fail "$coding: range bytes"
  echo "$coding $size"
}
: >"$TMP/sizes"
for args in "page1.html $TMP/page1.html.orig" "text/a $TMP/text-a.orig"; do
  set -- $args
  host=localhost
  [ "$1" = text/a ] && host=scripted
  check_coding "$1" "$2" "gzip, deflate" gzip "gzip -dc" "$host" >>"$TMP/sizes"
  check_coding "$1" "$2" "gzip, deflate, br" br "brotli -dc" "$host" >>"$TMP/sizes"
  check_coding "$1" "$2" "gzip, deflate, br, zstd" zstd "zstd -dcq" "$host" >>"$TMP/sizes"
done
F=page1.html
ORIG="$TMP/page1.html.orig"
curl -sf -D "$TMP/hi" -H "Accept-Encoding: zstd;q=0, br;q=0, gzip;q=0" "$C/$F" -o "$TMP/ident" || fail "identity GET"
[ -z "$(header "$TMP/hi" content-encoding || true)" ] || fail "q=0 for all: got $(header "$TMP/hi" content-encoding)"
cmp -s "$TMP/ident" "$ORIG" || fail "identity bytes"
# curl --compressed asks for what it decodes (deflate, gzip, br, zstd) and decodes it.
curl -sf --compressed "$C/$F" -o "$TMP/compressed" && cmp -s "$TMP/compressed" "$ORIG" || fail "curl --compressed"
# A binary file is never coded (it was not compressed at rest).
curl -sf -H "Host: scripted" "$C/img.png" -o /dev/null
curl -sf -D "$TMP/hb" -H "Host: scripted" -H "Accept-Encoding: gzip, br" "$C/img.png" -o "$TMP/png"
[ -z "$(header "$TMP/hb" content-encoding || true)" ] || fail "a PNG was sent $(header "$TMP/hb" content-encoding)"
curl -sf "$ORIGIN/img.png" | cmp -s - "$TMP/png" || fail "PNG bytes"
echo "sizes (identity $(stat -c %s "$ORIG")): $(tr '\n' ' ' <"$TMP/sizes")"
# The variants were made once each, and counted by coding.
gz_encoded=$(curl -sf "$C/_ferry/metrics" | awk '$1 == "ferry_cache_variant_encode_bytes_total{encoding=\"gzip\"}" { print $2 }')
[ "$gz_encoded" = "$(( $(stat -c %s "$ORIG") + $(stat -c %s "$TMP/text-a.orig") ))" ] || fail "gzip variant encoded $gz_encoded bytes (made more than once?)"
for c in gzip br zstd identity; do
  n=$(curl -sf "$C/_ferry/metrics" | awk -v k="ferry_cache_responses_total{encoding=\"$c\"}" '$1 == k { print $2 }')
  [ "${n:-0}" -ge 1 ] || fail "no $c responses counted"
done
echo "cache codings: ok"
