#!/usr/bin/env bash
# HTTP/2 clients that misbehave (tests/integration/h2_abuse.py, on python3-h2
# and raw frames) against the cache on h2c: a rapid-reset flood (CVE-2023-
# 44487) ends in GOAWAY ENHANCE_YOUR_CALM with the server's memory flat, the
# work of reset streams dropped and other clients served meanwhile; a CONTINUATION
# flood ends in GOAWAY; streams past SETTINGS_MAX_CONCURRENT_STREAMS are
# refused; an oversized header list gets 431; an idle connection is closed
# after the client timeout, even one that keeps sending PINGs.
source "$(dirname "$0")/lib.sh"
need curl
/usr/bin/python3 -c 'import h2, hpack' 2>/dev/null || skip "python3-h2 not installed (make setup)"
source "$FERRY_SOURCE/tests/integration/cache_lib.sh"
start_origin

ABUSE=(/usr/bin/python3 "$FERRY_SOURCE/tests/integration/h2_abuse.py")
start_cache_named abuse --origin "$ORIGIN" --dir "$TMP/cache" --client-timeout 3s
PORT=$(cat "$TMP/abuse.port")
PID=$CACHE_PID
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$PID/status"; }  # kB
peak() { awk '/^VmHWM:/ { print $2 }' "/proc/$PID/status"; }  # kB, the most RSS so far
slow_fetches() {  # origin fetches of /slow/PREFIX*
  curl -sf "$ORIGIN/_stats" |
    /usr/bin/python3 -c "import json,sys; c=json.load(sys.stdin)['counts']; print(sum(v for k, v in c.items() if k.startswith('/slow/$1')))"
}
curl -sf "$ORIGIN/text/a" -o "$TMP/a.orig"
curl -sf --http2-prior-knowledge "$C/text/a" -o /dev/null  # in memory from now on

# --- Rapid reset ----------------------------------------------------------------------
"${ABUSE[@]}" "$PORT" reset-flood 5000 /text/a >"$TMP/warm.json" || fail "reset flood: $(cat "$TMP/warm.json")"
before=$(rss)
peak_before=$(peak)
# Four floods at a time, five times over, while other clients are served.
for round in $(seq 1 5); do
  flooders=()
  for i in 1 2 3 4; do
    "${ABUSE[@]}" "$PORT" reset-flood 5000 /text/a >"$TMP/flood.$i.json" &
    flooders+=($!)
  done
  for i in 1 2 3; do
    curl -sf --http2-prior-knowledge "$C/text/a" | cmp -s - "$TMP/a.orig" || fail "an h2 client during the floods"
    curl -sf "$C/text/a" | cmp -s - "$TMP/a.orig" || fail "an h1 client during the floods"
  done
  for i in 1 2 3 4; do
    wait "${flooders[$((i - 1))]}" || fail "reset flood $round.$i: $(cat "$TMP/flood.$i.json")"
  done
done
after=$(rss)
echo "reset floods: 20 x 5000 HEADERS+RST_STREAM, 4 at a time, each ended by GOAWAY ENHANCE_YOUR_CALM" \
  "($(cat "$TMP/flood.1.json")); RSS ${before} kB -> ${after} kB, peak ${peak_before} kB -> $(peak) kB"
[ $((after - before)) -lt 16384 ] || fail "RSS grew by $((after - before)) kB over 20 floods"
[ $(($(peak) - peak_before)) -lt 32768 ] || fail "peak RSS grew by $(($(peak) - peak_before)) kB during the floods"
# Resets that come after the work started (a gap between HEADERS and RST):
# work not begun is dropped, so at most a few batches reach the origin.
"${ABUSE[@]}" "$PORT" reset-flood 5000 '/slow/gap*' 20 >"$TMP/gap.json" || fail "gapped flood: $(cat "$TMP/gap.json")"
sleep 1
fetched=$(slow_fetches gap)
echo "gapped flood: $(cat "$TMP/gap.json"), origin fetches $fetched"
[ "$fetched" -le 150 ] || fail "the reset streams' work went on: $fetched origin fetches"
# ...and in one read: the requests are dropped before any work begins.
"${ABUSE[@]}" "$PORT" reset-flood 5000 '/slow/tight*' >"$TMP/tight.json" || fail "tight flood: $(cat "$TMP/tight.json")"
sleep 1
[ "$(slow_fetches tight)" -le 50 ] || fail "a flood in one read reached the origin $(slow_fetches tight) times"
# Others are still served, on HTTP/2 and HTTP/1.1.
curl -sf --http2-prior-knowledge "$C/text/a" | cmp -s - "$TMP/a.orig" || fail "h2 client after the floods"
curl -sf "$C/text/a" | cmp -s - "$TMP/a.orig" || fail "h1 client after the floods"
echo "ok: rapid reset"

# --- CONTINUATION flood -------------------------------------------------------------------
before=$(rss)
for i in $(seq 1 5); do
  "${ABUSE[@]}" "$PORT" continuation-flood 200000 >"$TMP/cont.json" || fail "CONTINUATION flood: $(cat "$TMP/cont.json")"
done
after=$(rss)
echo "CONTINUATION floods: $(cat "$TMP/cont.json"); RSS ${before} kB -> ${after} kB"
[ $((after - before)) -lt 8192 ] || fail "RSS grew by $((after - before)) kB over CONTINUATION floods"
curl -sf --http2-prior-knowledge "$C/text/a" -o /dev/null || fail "served after the CONTINUATION floods"
echo "ok: CONTINUATION flood"

# --- Streams past the limit are refused -----------------------------------------------------
"${ABUSE[@]}" "$PORT" streams 150 '/slow/limit*' >"$TMP/streams.json" || fail "150 streams"
echo "150 streams at once: $(cat "$TMP/streams.json")"
grep -q '"ok": 100, "refused": 50, "other_reset": 0' "$TMP/streams.json" ||
  fail "streams past 100: $(cat "$TMP/streams.json")"
[ "$(slow_fetches limit)" = 100 ] || fail "refused streams reached the origin: $(slow_fetches limit)"
echo "ok: MAX_CONCURRENT_STREAMS"

# --- Header list over the limit ------------------------------------------------------------
"${ABUSE[@]}" "$PORT" big-header 20000 >"$TMP/big.json" || fail "a 20 KB header list: $(cat "$TMP/big.json")"
echo "ok: 431 for a 20 KB header list"

# --- An idle connection ends at the client timeout, PINGs or not ------------------------------
for ping in 0 0.5; do
  "${ABUSE[@]}" "$PORT" idle "$ping" >"$TMP/idle.json" || fail "idle connection (PING every ${ping}s) not closed"
  t=$(/usr/bin/python3 -c "import json; print(json.load(open('$TMP/idle.json'))['closed_after_s'])")
  /usr/bin/python3 -c "import sys; sys.exit(0 if 2.5 <= $t <= 6 else 1)" ||
    fail "idle h2 connection (PING every ${ping}s) closed after ${t}s (timeout 3s)"
  echo "ok: idle connection (PING every ${ping}s) closed after ${t}s"
done
