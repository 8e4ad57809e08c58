#!/usr/bin/env bash
# ferry cache serve against a scripted origin (cache_origin.py), with curl
# (built with zstd) and the zstd command as clients we did not write:
# MISS then HIT with identical bytes; zstd clients get the stored zstd bytes
# (which zstd -d turns back into the original) with their own ETag; text is
# compressed at rest, images and gzip bodies are not (never twice); no-store
# always goes to the origin; 304s; revalidation with If-None-Match; STALE
# when the origin fails; other methods pass through; bodies over
# --max-object are kept too; entries survive a restart; a damaged record
# is refetched, never served; unknown hosts and
# malformed requests are refused; bad flags get a one-line error.
source "$(dirname "$0")/lib.sh"
need curl
need zstd
curl -V | grep -q zstd || skip "curl without zstd"

source "$FERRY_SOURCE/tests/integration/cache_lib.sh"
start_origin
start_cache() { start_cache_named cache --origin "$ORIGIN" --dir "$TMP/cache" "$@"; }
start_cache

# --- MISS, then HIT, same bytes; one origin request ---------------------------
curl -sf "$ORIGIN/text/a" -o "$TMP/a.orig"
curl -sf -D "$TMP/h1" "$C/text/a" -o "$TMP/a1"
curl -sf -D "$TMP/h2" "$C/text/a" -o "$TMP/a2"
[ "$(header "$TMP/h1" x-cache)" = MISS ] || fail "first request: $(header "$TMP/h1" x-cache)"
[ "$(header "$TMP/h2" x-cache)" = HIT ] || fail "second request: $(header "$TMP/h2" x-cache)"
cmp -s "$TMP/a.orig" "$TMP/a1" && cmp -s "$TMP/a.orig" "$TMP/a2" || fail "bytes differ from the origin's"
[ "$(header "$TMP/h2" etag)" = '"t-a"' ] || fail "identity ETag $(header "$TMP/h2" etag)"
[ "$(origin_count /text/a)" = 2 ] || fail "origin saw $(origin_count /text/a) requests (1 direct + 1 fill)"

# --- zstd clients get the stored bytes; curl and zstd decode them -------------
curl -sf -D "$TMP/hz" -H 'Accept-Encoding: zstd' "$C/text/a" -o "$TMP/a.zst"
[ "$(header "$TMP/hz" content-encoding)" = zstd ] || fail "no Content-Encoding: zstd"
[ "$(header "$TMP/hz" etag)" = '"t-a-zstd"' ] || fail "zstd ETag $(header "$TMP/hz" etag)"
[ "$(header "$TMP/hz" vary)" = Accept-Encoding ] || fail "no Vary"
zstd -dcq "$TMP/a.zst" | cmp -s - "$TMP/a.orig" || fail "zstd -d does not give the original"
[ "$(stat -c %s "$TMP/a.zst")" -lt $(( $(stat -c %s "$TMP/a.orig") / 3 )) ] || fail "not compressed 3x"
curl -sf --compressed "$C/text/a" | cmp -s - "$TMP/a.orig" || fail "curl --compressed differs"
# At rest: the entry (a record in a segment file) is the compressed size,
# not the logical one.
entry_bytes=$(metric "$C" ferry_cache_disk_bytes)
[ "$entry_bytes" -lt $(( $(stat -c %s "$TMP/a.orig") / 3 )) ] || fail "entry of $entry_bytes bytes is not compressed"
seg_bytes=$(find "$TMP/cache/segments" -name '*.seg' -printf '%s\n' | awk '{ n += $1 } END { print n }')
[ "$seg_bytes" = $((entry_bytes + 32)) ] || fail "segment files of $seg_bytes bytes for one record of $entry_bytes"

# --- chunked bodies: from the origin (stored compressed: ferry holds the
# whole body, so its length is known), and from a client ------------------------
curl -sf "$ORIGIN/chunked/c" -o "$TMP/c.orig"
curl -sf "$C/chunked/c" -o "$TMP/c1"
curl -sf -D "$TMP/hc" -H 'Accept-Encoding: zstd' "$C/chunked/c" -o "$TMP/c.zst"
cmp -s "$TMP/c.orig" "$TMP/c1" || fail "chunked origin body differs"
[ "$(header "$TMP/hc" x-cache)" = HIT ] && [ "$(header "$TMP/hc" content-encoding)" = zstd ] || fail "chunked body not kept compressed"
zstd -dcq "$TMP/c.zst" | cmp -s - "$TMP/c.orig" || fail "chunked body, zstd"
out=$(head -c 100000 "$TMP/a.orig" | curl -sf -XPOST -H 'Transfer-Encoding: chunked' --data-binary @- "$C/echo" | wc -c)
[ "$out" = 100000 ] || fail "chunked POST echoed $out bytes"

# --- bodies over --max-object: streamed through a spool, and kept as big objects ----
MAIN_C=$C MAIN_PID=$CACHE_PID
start_cache_named large --origin "$ORIGIN" --dir "$TMP/large" --max-object 100K
curl -sf -D "$TMP/hb" "$C/blob/l" -o "$TMP/l1"
curl -sf "$ORIGIN/blob/l" | cmp -s - "$TMP/l1" || fail "large body differs"
[ "$(header "$TMP/hb" content-length)" = 300000 ] && [ "$(header "$TMP/hb" x-cache)" = MISS ] || fail "large body headers"
for _ in $(seq 1 50); do [ "$(metric "$C" ferry_cache_disk_big_entries)" = 1 ] && break; sleep 0.1; done
curl -sf -D "$TMP/hb2" "$C/blob/l" -o "$TMP/l2"
[ "$(header "$TMP/hb2" x-cache)" = HIT ] || fail "a body over --max-object was not kept: $(header "$TMP/hb2" x-cache)"
cmp -s "$TMP/l1" "$TMP/l2" || fail "large body from disk differs"
[ "$(origin_count /blob/l)" = 2 ] || fail "origin saw $(origin_count /blob/l) requests for /blob/l (1 direct + 1 fill)"
curl -sfI "$C/blob/l" -D "$TMP/hbh" -o /dev/null
[ "$(header "$TMP/hbh" content-length)" = 300000 ] || fail "HEAD of a large body"
curl -sf -D "$TMP/hbc" "$C/chunked/big" -o "$TMP/l2"  # chunked from the origin: chunked to the client
curl -sf "$ORIGIN/chunked/big" | cmp -s - "$TMP/l2" || fail "large chunked body differs"
[ "$(header "$TMP/hbc" transfer-encoding)" = chunked ] || fail "large chunked body not sent chunked"
kill "$CACHE_PID"; wait "$CACHE_PID" 2>/dev/null || true
C=$MAIN_C CACHE_PID=$MAIN_PID

# --- HEAD: the length a GET would carry ---------------------------------------
curl -sfI "$C/text/a" -D "$TMP/hh" -o /dev/null
[ "$(header "$TMP/hh" content-length)" = "$(stat -c %s "$TMP/a.orig")" ] || fail "HEAD length"

# --- media and pre-encoded bodies are stored as received ----------------------
curl -sf "$C/img.png" -o /dev/null
curl -sf -D "$TMP/hp" -H 'Accept-Encoding: zstd' "$C/img.png" -o "$TMP/img"
[ "$(header "$TMP/hp" x-cache)" = HIT ] && [ -z "$(header "$TMP/hp" content-encoding)" ] || fail "png transcoded"
curl -sf "$ORIGIN/img.png" | cmp -s - "$TMP/img" || fail "png bytes differ"
curl -sf -H 'Accept-Encoding: gzip' "$C/pre.js" -o /dev/null
curl -sf -D "$TMP/hg" -H 'Accept-Encoding: gzip, zstd' "$C/pre.js" -o "$TMP/pre.gz"
[ "$(header "$TMP/hg" content-encoding)" = gzip ] || fail "gzip body re-encoded: $(header "$TMP/hg" content-encoding)"
gzip -dc "$TMP/pre.gz" >"$TMP/pre.js" && grep -q "var x" "$TMP/pre.js" || fail "gzip body damaged"

# --- no-store always goes to the origin ---------------------------------------
curl -sf "$C/nostore" -o /dev/null; curl -sf "$C/nostore" -o /dev/null
[ "$(origin_count /nostore)" = 2 ] || fail "no-store response was served from the cache"

# --- conditional requests -------------------------------------------------------
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'If-None-Match: "t-a"' "$C/text/a")
[ "$code" = 304 ] || fail "If-None-Match: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Accept-Encoding: zstd' -H 'If-None-Match: "t-a-zstd"' "$C/text/a")
[ "$code" = 304 ] || fail "If-None-Match (zstd variant): $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'If-None-Match: "other"' "$C/text/a")
[ "$code" = 200 ] || fail "non-matching If-None-Match: $code"

# --- revalidation of a stale entry --------------------------------------------
curl -sf "$C/short/r" -o /dev/null
sleep 2.2
curl -sf -D "$TMP/hr" "$C/short/r" -o "$TMP/r"
[ "$(header "$TMP/hr" x-cache)" = EXPIRED ] || fail "stale entry: $(header "$TMP/hr" x-cache)"
[ "$(origin_count /short/r conditional)" = 1 ] || fail "no conditional request to the origin"
curl -sf "$ORIGIN/short/r" | cmp -s - "$TMP/r" || fail "revalidated body differs"

# --- no freshness information: --default-ttl decides (0, the default, is nginx's
# choice: not stored; the restart below uses 1h) -----------------------------------
curl -sf "$C/plain/p" -o /dev/null
curl -sf -D "$TMP/hq" "$C/plain/p" -o /dev/null
[ "$(header "$TMP/hq" x-cache)" = MISS ] && [ "$(origin_count /plain/p)" = 2 ] \
  || fail "default TTL 0: $(header "$TMP/hq" x-cache), origin saw $(origin_count /plain/p)"

# --- STALE when the origin fails -------------------------------------------------
sleep 1.2
curl -sf -XPOST "$ORIGIN/_down" -o /dev/null
curl -s -D "$TMP/hs" "$C/short/r" -o "$TMP/s"
curl -sf -XPOST "$ORIGIN/_up" -o /dev/null
[ "$(header "$TMP/hs" x-cache)" = STALE ] || fail "origin down: $(header "$TMP/hs" x-cache)"
cmp -s "$TMP/r" "$TMP/s" || fail "stale body differs"

# --- other methods pass through ---------------------------------------------------
out=$(curl -sf -XPOST --data-binary 'hello origin' -D "$TMP/hpost" "$C/echo")
[ "$out" = "hello origin" ] && [ "$(header "$TMP/hpost" x-cache)" = BYPASS ] || fail "POST: $out"

# --- malformed and misdirected requests ---------------------------------------------
port=$(cat "$TMP/cache.port")
reply=$(/usr/bin/python3 -c "
import socket; s=socket.create_connection(('127.0.0.1',$port)); s.sendall(b'GARBAGE\r\n\r\n'); print(s.recv(100).split(b'\r\n')[0].decode())")
[ "$reply" = "HTTP/1.1 400 Bad Request" ] || fail "garbage request: $reply"
reply=$(/usr/bin/python3 -c "
import socket; s=socket.create_connection(('127.0.0.1',$port)); s.sendall(b'GET / HTTP/1.1\r\nHost: x\r\nX: ' + b'a'*20000 + b'\r\n\r\n'); print(s.recv(100).split(b'\r\n')[0].decode())")
[ "$reply" = "HTTP/1.1 431 Request Header Fields Too Large" ] || fail "huge header: $reply"

# --- entries survive a restart; a damaged one is refetched, never served --------
kill "$CACHE_PID"; wait "$CACHE_PID" 2>/dev/null || true
start_cache --default-ttl 1h --memory-size 0  # reads from disk: the damage below is seen
curl -sf "$C/plain/q" -o /dev/null
curl -sf -D "$TMP/hq" "$C/plain/q" -o /dev/null
[ "$(header "$TMP/hq" x-cache)" = HIT ] || fail "default TTL 1h: $(header "$TMP/hq" x-cache)"
before=$(origin_count /text/a)
curl -sf -D "$TMP/h3" "$C/text/a" -o "$TMP/a3"
[ "$(header "$TMP/h3" x-cache)" = HIT ] && [ "$(origin_count /text/a)" = "$before" ] || fail "entry lost in restart"
cmp -s "$TMP/a.orig" "$TMP/a3" || fail "bytes after restart"
# One byte of /text/a's record body flipped in its segment file (the
# record layout: src/cache/segment_record.h).
/usr/bin/python3 - "$TMP/cache/segments" <<'PY' || fail "no record of /text/a found to damage"
import glob, struct, sys
for path in sorted(glob.glob(sys.argv[1] + "/*.seg")):
    b = bytearray(open(path, "rb").read())
    at = 32
    while at + 24 <= len(b) and b[at:at + 4] == b"FRC1":
        m, n = struct.unpack_from("<II", b, at + 8)
        if b[at + 4:at + 5] == b"L" and b"/text/a" in b[at + 24:at + 24 + m]:
            b[at + 24 + m + n // 2] ^= 1
            open(path, "wb").write(b)
            sys.exit(0)
        at += 32 + m + n
sys.exit(1)
PY
corrupt0=$(metric "$C" ferry_cache_corrupt_entries_total)
for path in /text/a /short/r; do
  curl -sf -D "$TMP/h4" "$C$path" -o "$TMP/x4"
  curl -sf "$ORIGIN$path" | cmp -s - "$TMP/x4" || fail "$path: damaged entry served"
done
[ "$(metric "$C" ferry_cache_corrupt_entries_total)" = $((corrupt0 + 1)) ] || fail "the damaged record was not counted"

# --- SIGKILL while entries are being written: after a restart every entry
# served is whole (nothing torn), and the cache keeps working -----------------------
kill "$CACHE_PID"; wait "$CACHE_PID" 2>/dev/null || true
start_cache_named killed --origin "$ORIGIN" --dir "$TMP/killed"
fills=()
for i in $(seq 1 40); do curl -s "$C/text/k$i" -o /dev/null & fills+=($!); done
sleep 0.3
kill -9 "$CACHE_PID"; wait "$CACHE_PID" 2>/dev/null || true
for p in "${fills[@]}"; do wait "$p" 2>/dev/null || true; done
start_cache_named killed2 --origin "$ORIGIN" --dir "$TMP/killed"
hits=0
for i in $(seq 1 40); do
  curl -sf -D "$TMP/hk" "$C/text/k$i" -o "$TMP/k"
  curl -sf "$ORIGIN/text/k$i" | cmp -s - "$TMP/k" || fail "k$i: wrong bytes after SIGKILL"
  [ "$(header "$TMP/hk" x-cache)" = HIT ] && hits=$((hits + 1))
done
echo "after SIGKILL: $hits of 40 entries survived whole, the rest refetched"
[ -z "$(ls -A "$TMP/killed/tmp")" ] || fail "temporary files left after reopening"

# --- only configured origins ---------------------------------------------------------
kill "$CACHE_PID"; wait "$CACHE_PID" 2>/dev/null || true
start_cache_named mapped --origin-host-map "site.test=$ORIGIN" --dir "$TMP/cache2"
curl -sf -H 'Host: site.test' "$C/text/a" | cmp -s - "$TMP/a.orig" || fail "mapped host"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: evil.test' "$C/text/a")
[ "$code" = 421 ] || fail "unmapped host: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' --proxy "$C" "http://evil.test/text/a")
[ "$code" = 421 ] || fail "absolute-form to another host: $code"

# --- bad flags: one line, non-zero --------------------------------------------------
for args in "--dir $TMP/c3" "--dir $TMP/c3 --origin ftp://x" "--dir $TMP/c3 --origin $ORIGIN --listen nowhere" \
            "--dir $TMP/c3 --origin $ORIGIN --max-size lots"; do
  rc=0
  # shellcheck disable=SC2086
  "$FERRY" cache serve $args >"$TMP/bad.out" 2>"$TMP/bad.err" || rc=$?
  [ $rc != 0 ] && [ "$(wc -l <"$TMP/bad.err")" = 1 ] || fail "cache serve $args: exit $rc, $(cat "$TMP/bad.err")"
done
echo "cache_test: ok"
