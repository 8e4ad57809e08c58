#!/usr/bin/env bash
# HTTP/2 to the cache, from clients we did not write: nghttp and curl over
# TLS (h2 chosen by ALPN, the certificate verified against a CA this test
# makes) and on the plain port (h2c with prior knowledge), beside HTTP/1.1
# on the same ports. The origin's bytes, zstd and identity; X-Cache HIT;
# HEAD, 304 and a range as on HTTP/1.1; concurrent misses coalesced into
# one origin fetch; many streams (h2load); a body larger than the memory
# limits streamed whole over many flow-control windows; requests counted
# by protocol; a graceful stop that finishes a stream in progress; and
# --no-http2.
source "$(dirname "$0")/lib.sh"
need curl
need openssl
need zstd
need nghttp
need h2load
source "$FERRY_SOURCE/tests/integration/cache_lib.sh"
start_origin

# A CA, and a certificate it signed for 127.0.0.1 and cache.test.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=ferry-test-ca \
  -keyout "$TMP/ca.key" -out "$TMP/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=cache.test \
  -keyout "$TMP/cache.key" -out "$TMP/cache.csr" 2>/dev/null
echo "subjectAltName=DNS:cache.test,IP:127.0.0.1" >"$TMP/cache.ext"
openssl x509 -req -in "$TMP/cache.csr" -CA "$TMP/ca.pem" -CAkey "$TMP/ca.key" -CAcreateserial -days 2 \
  -extfile "$TMP/cache.ext" -out "$TMP/cache.pem" 2>/dev/null

start_cache_named h2 --origin "$ORIGIN" --dir "$TMP/cache" --max-object 512K --memory-size 4M \
  --listen-tls 127.0.0.1:0 --tls-port-file "$TMP/h2.tls.port" --tls-cert "$TMP/cache.pem" --tls-key "$TMP/cache.key"
PLAIN=$C
H2PID=$CACHE_PID
TLS="https://127.0.0.1:$(cat "$TMP/h2.tls.port")"
CURL_TLS=(curl -sf --cacert "$TMP/ca.pem")

curl -sf "$ORIGIN/text/a" -o "$TMP/a.orig"
curl -sf "$ORIGIN/big/b" -o "$TMP/b.orig"

# --- h2 over TLS by ALPN, and h2c with prior knowledge ---------------------------
out=$(nghttp -nv "$TLS/text/a" 2>&1) || fail "nghttp over TLS: $out"
grep -q "The negotiated protocol: h2" <<<"$out" || fail "ALPN did not choose h2"
grep -q ":status: 200" <<<"$out" || fail "nghttp over TLS: no 200"
grep -q "SETTINGS_MAX_CONCURRENT_STREAMS(0x03):100" <<<"$out" || fail "no stream limit in the server's SETTINGS"
nghttp "$TLS/text/a" | cmp -s - "$TMP/a.orig" || fail "nghttp over TLS: body differs"
nghttp "${PLAIN}/text/a" | cmp -s - "$TMP/a.orig" || fail "nghttp h2c: body differs"
nghttp -nv "${PLAIN}/text/a" 2>&1 | grep -q "x-cache: HIT" || fail "nghttp h2c: not a HIT"

v=$("${CURL_TLS[@]}" --http2 -D "$TMP/h1" -o "$TMP/a1" -w '%{http_version}' "$TLS/text/a") || fail "curl --http2 over TLS"
[ "$v" = 2 ] || fail "curl over TLS spoke HTTP/$v"
cmp -s "$TMP/a1" "$TMP/a.orig" || fail "curl h2 over TLS: body differs"
[ "$(header "$TMP/h1" x-cache)" = HIT ] || fail "curl h2 over TLS: $(header "$TMP/h1" x-cache)"
v=$("${CURL_TLS[@]}" --http2 -H 'accept-encoding: zstd' -D "$TMP/h2" -o "$TMP/a.zst" -w '%{http_version}' "$TLS/text/a")
[ "$v" = 2 ] && [ "$(header "$TMP/h2" content-encoding)" = zstd ] || fail "no zstd over h2"
zstd -dcq "$TMP/a.zst" | cmp -s - "$TMP/a.orig" || fail "zstd over h2 does not decode to the original"
for enc in identity zstd; do
  v=$(curl -sf --http2-prior-knowledge -H "accept-encoding: $enc" -D "$TMP/hc" -o "$TMP/c.$enc" \
    -w '%{http_version}' "$PLAIN/text/c") || fail "h2c $enc"
  [ "$v" = 2 ] || fail "h2c spoke HTTP/$v"
done
[ "$(header "$TMP/hc" x-cache)" = HIT ] || fail "second h2c request: $(header "$TMP/hc" x-cache)"
curl -sf "$ORIGIN/text/c" | cmp -s - "$TMP/c.identity" || fail "h2c identity body differs"
zstd -dcq "$TMP/c.zstd" | cmp -s - "$TMP/c.identity" || fail "h2c zstd body differs"
# HTTP/1.1 on the same ports.
[ "$(curl -sf -o /dev/null -w '%{http_version}' "$PLAIN/text/a")" = 1.1 ] || fail "HTTP/1.1 on the plain port"
[ "$("${CURL_TLS[@]}" --http1.1 -o /dev/null -w '%{http_version}' "$TLS/text/a")" = 1.1 ] ||
  fail "HTTP/1.1 over TLS"
echo "ok: h2 by ALPN, h2c, HTTP/1.1 beside them"

# --- HEAD, 304 and a range, as on HTTP/1.1 -------------------------------------------
curl -sf --http2-prior-knowledge -I "$PLAIN/text/a" -o "$TMP/head" || fail "HEAD over h2"
[ "$(header "$TMP/head" content-length)" = "$(stat -c %s "$TMP/a.orig")" ] || fail "HEAD length: $(cat "$TMP/head")"
etag=$(header "$TMP/head" etag)
code=$(curl -s --http2-prior-knowledge -H "if-none-match: $etag" -o "$TMP/nm" -w '%{http_code}' "$PLAIN/text/a")
[ "$code" = 304 ] && [ ! -s "$TMP/nm" ] || fail "If-None-Match over h2: $code"
code=$(curl -s --http2-prior-knowledge -r 1000-1999 -o "$TMP/range" -w '%{http_code}' "$PLAIN/text/a")
[ "$code" = 206 ] || fail "range over h2: $code"
dd if="$TMP/a.orig" bs=1000 skip=1 count=1 2>/dev/null | cmp -s - "$TMP/range" || fail "range bytes differ"
echo "ok: HEAD, 304, range"

# --- Concurrent misses on one connection: one origin fetch ---------------------------
nghttp -m 20 "$PLAIN/slow/coalesce" >"$TMP/slow20" || fail "20 streams of one miss"
[ "$(origin_count /slow/coalesce)" = 1 ] || fail "20 streams made $(origin_count /slow/coalesce) origin fetches"
[ "$(stat -c %s "$TMP/slow20")" = $((20 * 200000)) ] || fail "20 streams: $(stat -c %s "$TMP/slow20") bytes"
echo "ok: coalesced"

# --- Many streams ---------------------------------------------------------------------
for url in "$PLAIN/text/a" "$TLS/text/a"; do
  h2load -n 2000 -c 4 -m 50 "$url" >"$TMP/h2load" 2>&1 || fail "h2load $url: $(tail -5 "$TMP/h2load")"
  grep -q "status codes: 2000 2xx" "$TMP/h2load" || fail "h2load $url: $(grep -E 'requests:|status codes' "$TMP/h2load")"
  echo "h2load $url: $(grep -E '^finished' "$TMP/h2load")"
done
echo "ok: h2load -n 2000 -c 4 -m 50, all 2xx"

# --- A body over --max-object and --memory-size, streamed over many windows ----------
for url in "$PLAIN/big/b" "$TLS/big/b"; do
  v=$("${CURL_TLS[@]}" --http2-prior-knowledge -o "$TMP/b1" -w '%{http_version} %{size_download}' "$url") ||
    fail "large body over h2 $url"
  [ "$v" = "2 8000000" ] || fail "large body over h2 $url: $v"
  cmp -s "$TMP/b1" "$TMP/b.orig" || fail "large body over h2 differs ($url)"
done
# nghttp with a 64 KB window per stream and per connection: ~120 windows.
nghttp -w 16 -W 16 "$PLAIN/big/b" | cmp -s - "$TMP/b.orig" || fail "large body with small windows differs"
echo "ok: 8 MB streamed over h2"

# --- Requests by protocol ----------------------------------------------------------------
h1=$(metric "$PLAIN" 'ferry_cache_http_requests_total{protocol="h1"}')
h2=$(metric "$PLAIN" 'ferry_cache_http_requests_total{protocol="h2"}')
[ "$h1" -ge 3 ] && [ "$h1" -lt 10 ] || fail "h1 requests counted: $h1"
[ "$h2" -ge 4000 ] || fail "h2 requests counted: $h2"
echo "ok: requests by protocol (h1 $h1, h2 $h2)"

# --- A stop: GOAWAY, and the stream in progress finishes --------------------------------
nghttp -nv "$PLAIN/trickle/stop" >"$TMP/stop.log" 2>&1 &
NG=$!
for _ in $(seq 1 50); do grep -q "recv DATA" "$TMP/stop.log" && break; sleep 0.1; done
kill -TERM "$H2PID"
wait "$NG" || fail "nghttp during the stop: $(tail -5 "$TMP/stop.log")"
grep -A1 "recv GOAWAY" "$TMP/stop.log" | grep -q "error_code=NO_ERROR" || fail "no GOAWAY NO_ERROR on stop"
# The whole answer came, its end after the GOAWAY.
bytes=$(sed -n 's/.*recv DATA frame <length=\([0-9]*\).*/\1/p' "$TMP/stop.log" | awk '{ n += $1 } END { print n }')
[ "$bytes" = 1000000 ] || fail "the stream in progress at the stop got $bytes bytes"
sed -n '/recv GOAWAY/,$p' "$TMP/stop.log" | grep -q "END_STREAM" || fail "the stream did not end after the GOAWAY"
wait "$H2PID" || fail "exit code after SIGTERM"
echo "ok: graceful stop (GOAWAY NO_ERROR, the 1 MB answer in progress finished)"

# --- --no-http2: HTTP/1.1 only -------------------------------------------------------------
start_cache_named h1only --origin "$ORIGIN" --dir "$TMP/cache1" --no-http2 \
  --listen-tls 127.0.0.1:0 --tls-port-file "$TMP/h1only.tls.port" --tls-cert "$TMP/cache.pem" --tls-key "$TMP/cache.key"
v=$("${CURL_TLS[@]}" --http2 -o /dev/null -w '%{http_version}' "https://127.0.0.1:$(cat "$TMP/h1only.tls.port")/text/a")
[ "$v" = 1.1 ] || fail "--no-http2 spoke HTTP/$v over TLS"
if curl -s --http2-prior-knowledge --max-time 5 -o /dev/null "$C/text/a"; then fail "--no-http2 answered h2c"; fi
echo "ok: --no-http2"
