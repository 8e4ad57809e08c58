#!/usr/bin/env bash
# A real browser through the cache: headless Chromium loads pages of
# Python's HTML documentation (HTML, CSS, JavaScript, SVG and PNG images,
# from python3 -m http.server, which sends Last-Modified and no lifetime)
# through `ferry cache serve` with default flags, over http://127.0.0.1 and
# over https (a certificate the test makes, pinned for Chromium by its key).
# For each page: the DOM and a screenshot equal those of loading the origin
# directly; the paths the origin was asked for are the same (every resource
# loaded, each once); ferry's metrics show Chromium took zstd; a second
# load in a fresh profile is all hits (the origin sees nothing new).
source "$(dirname "$0")/lib.sh"
need curl
need openssl
need chromium
source "$FERRY_SOURCE/tests/integration/cache_lib.sh"
DOCS=/usr/share/doc/python3.11/html
[ -f "$DOCS/tutorial/index.html" ] || skip "$DOCS missing (scripts/setup.sh test installs python3.11-doc)"

(cd "$DOCS" && exec /usr/bin/python3 -m http.server --bind 127.0.0.1 0 >"$TMP/origin.log" 2>&1) &
PIDS+=($!)
for _ in $(seq 1 50); do grep -q port "$TMP/origin.log" 2>/dev/null && break; sleep 0.1; done
STATIC_PORT=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$TMP/origin.log" | head -1)
[ -n "$STATIC_PORT" ] || fail "python3 -m http.server did not start"
STATIC="http://127.0.0.1:$STATIC_PORT"
wait_port "$STATIC_PORT"
origin_paths() { grep -o '"GET [^ ]*' "$TMP/origin.log" | cut -d' ' -f2 | sort; }  # every GET the origin answered
origin_lines() { wc -l <"$TMP/origin.log"; }  # the log's lines (one per request after the first)
grep -q '" 200 -' "$TMP/origin.log" 2>/dev/null && fail "origin log not empty at start"

openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$TMP/key.pem" -out "$TMP/cert.pem" 2>/dev/null
SPKI=$(openssl x509 -in "$TMP/cert.pem" -pubkey -noout | openssl pkey -pubin -outform der |
  openssl dgst -sha256 -binary | base64)

RUN=0
browse() {  # browse MODE URL OUT: one headless Chromium, a fresh profile; MODE dom|png
  RUN=$((RUN + 1))
  local args=(--headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1600
    --user-data-dir="$TMP/profile-$RUN" --ignore-certificate-errors-spki-list="$SPKI"
    --disable-features=Translate,OptimizationHints,MediaRouter --no-first-run --disable-extensions)
  if [ "$1" = dom ]; then
    timeout 90 chromium "${args[@]}" --dump-dom "$2" >"$3" 2>>"$TMP/chromium.log" || fail "chromium --dump-dom $2"
    [ -s "$3" ] || fail "chromium gave no DOM for $2"
  else
    timeout 90 chromium "${args[@]}" --screenshot="$3" "$2" >>"$TMP/chromium.log" 2>&1 || fail "chromium --screenshot $2"
    [ -s "$3" ] || fail "chromium gave no screenshot for $2"
  fi
}

PAGES="tutorial/index.html tutorial/controlflow.html"
# --- the origin directly: what the pages are and what they ask for ----------------
: >"$TMP/origin.log.direct"
for p in $PAGES; do
  n=$(echo "$p" | tr / _)
  browse dom "$STATIC/$p" "$TMP/$n.origin.dom"
  browse png "$STATIC/$p" "$TMP/$n.origin.png"
done
origin_paths | sort -u >"$TMP/paths.direct"
[ "$(wc -l <"$TMP/paths.direct")" -ge 10 ] || fail "the pages asked for only $(wc -l <"$TMP/paths.direct") paths"
grep -q '\.css' "$TMP/paths.direct" && grep -q '\.js' "$TMP/paths.direct" && grep -q '\.svg\|\.png' "$TMP/paths.direct" ||
  fail "the pages did not load CSS, JavaScript and images: $(tr '\n' ' ' <"$TMP/paths.direct")"
if grep '"GET ' "$TMP/origin.log" | grep -qv '" 200 -\|" 304 -'; then fail "the origin failed a request: $(grep -v '" 200 -' "$TMP/origin.log" | head -3)"; fi
before=$(origin_lines)

check_through() {  # check_through LABEL CACHE_URL: cold load, warm load, compare
  local label=$1 url=$2 p n
  local lines0; lines0=$(origin_lines)
  # Cold: every resource is a miss, filled from the origin.
  for p in $PAGES; do
    n=$(echo "$p" | tr / _)
    browse dom "$url/$p" "$TMP/$n.$label.cold.dom"
    cmp -s "$TMP/$n.origin.dom" "$TMP/$n.$label.cold.dom" ||
      fail "$label: the DOM of $p through ferry differs from the origin's: $(diff "$TMP/$n.origin.dom" "$TMP/$n.$label.cold.dom" | head -5)"
  done
  # The origin saw the same paths as for the direct load (every resource
  # asked for, through ferry, once).
  tail -n +"$((lines0 + 1))" "$TMP/origin.log" | grep -o '"GET [^ ]*' | cut -d' ' -f2 | sort >"$TMP/paths.$label"
  sort -u "$TMP/paths.$label" | cmp -s - "$TMP/paths.direct" ||
    fail "$label: the origin saw other paths through ferry: $(sort -u "$TMP/paths.$label" | diff - "$TMP/paths.direct" | head -5)"
  [ "$(sort "$TMP/paths.$label" | uniq -d | wc -l)" = 0 ] ||
    fail "$label: the origin was asked twice for $(sort "$TMP/paths.$label" | uniq -d | head -3 | tr '\n' ' ')"
  # Warm, fresh profiles: all hits, nothing new at the origin, same pixels.
  local lines1 hits0; lines1=$(origin_lines); hits0=$(metric "$url" 'ferry_cache_requests_total{result="hit"}')
  for p in $PAGES; do
    n=$(echo "$p" | tr / _)
    browse png "$url/$p" "$TMP/$n.$label.png"
    cmp -s "$TMP/$n.origin.png" "$TMP/$n.$label.png" || fail "$label: the screenshot of $p through ferry differs from the origin's"
    browse dom "$url/$p" "$TMP/$n.$label.warm.dom"
    cmp -s "$TMP/$n.origin.dom" "$TMP/$n.$label.warm.dom" || fail "$label: the warm DOM of $p differs"
  done
  [ "$(origin_lines)" = "$lines1" ] || fail "$label: the warm loads reached the origin $(( $(origin_lines) - lines1 )) times"
  local hits; hits=$(( $(metric "$url" 'ferry_cache_requests_total{result="hit"}') - hits0 ))
  [ "$hits" -ge $(( 2 * $(wc -l <"$TMP/paths.direct") - 4 )) ] || fail "$label: only $hits hits on the warm loads"
  local zstd; zstd=$(metric "$url" 'ferry_cache_responses_total{encoding="zstd"}')
  [ "${zstd:-0}" -ge 5 ] || fail "$label: Chromium did not take zstd ($zstd answers)"
  echo "$label: $(wc -l <"$TMP/paths.direct") resources, $hits warm hits, $zstd zstd answers"
}

start_cache_named plain --origin "$STATIC" --dir "$TMP/cache-plain"
check_through http "$C"
start_cache_named tls --origin "$STATIC" --dir "$TMP/cache-tls" --tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem"
TLS_URL="https://127.0.0.1:$(cat "$TMP/tls.port")"
metric() { curl -sf --cacert "$TMP/cert.pem" "$1/_ferry/metrics" | awk -v n="$2" '$1 == n { print $2 }'; }
check_through https "$TLS_URL"
echo "cache browser: ok"
