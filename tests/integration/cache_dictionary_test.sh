#!/usr/bin/env bash
# RFC 9842 compression dictionaries in a real browser: headless Chromium
# loads a page using version 1 of a bundle (Debian's jQuery 3.6.1 and a
# little app code) through `ferry cache serve --dictionary-versioned` on
# http://localhost (a secure context), then, in the same profile, a page
# using version 2 (a few of jQuery's functions edited, the app code
# changed). Checks: ferry marked version 1 (Use-As-Dictionary), Chromium
# asked for version 2 with Available-Dictionary and got it dcz-encoded,
# the DOM (the scripts' results) equals a load of the same page straight
# from the origin; and the figure: version 2's bytes on the wire beside
# zstd -3 and brotli -11 of it without a dictionary (goal: 10x fewer than
# zstd). A curl without dcz, and one naming an unknown dictionary, get
# the ordinary answer; the dcz body decodes with zstd's own CLI against
# version 1.
source "$(dirname "$0")/lib.sh"
need curl
need chromium
need zstd
need brotli
need openssl
source "$FERRY_SOURCE/tests/integration/cache_lib.sh"
JQ=/usr/share/javascript/jquery/jquery.js
[ -f "$JQ" ] || skip "$JQ missing (scripts/setup.sh installs libjs-jquery)"

SITE="$TMP/site"
mkdir -p "$SITE/static"
report='function appReport(v) { return JSON.stringify({app: v, version: jQuery.fn.jquery, trimmed: jQuery.trim("  a b  "), mapped: jQuery.map([1, 2, 3], function (x) { return x * v; }), empty: jQuery.isEmptyObject({}), html: jQuery.parseHTML("<b>x</b>")[0].outerHTML}); }'
{ cat "$JQ"; echo "$report"; } >"$SITE/static/app.v1.js"
# Version 2: the version string, two functions edited, one added.
sed -e 's/version = "3.6.1",/version = "3.6.1-app2",/' \
  -e 's/^jQuery.trim = function( text ) {/jQuery.trim = function( text ) {\n\ttext = text == null ? text : String( text );/' \
  -e 's/^	isEmptyObject: function( obj ) {/	isEmptyObject: function( obj ) {\n\t\tif ( obj === null ) { return true; }/' "$JQ" >"$SITE/static/app.v2.js"
echo 'jQuery.appDouble = function (xs) { return jQuery.map(xs, function (x) { return 2 * x; }); };' >>"$SITE/static/app.v2.js"
echo "${report/\{app: v,/\{app: v, doubled: jQuery.appDouble([4, 5]),}" >>"$SITE/static/app.v2.js"
changed=$( (diff "$SITE/static/app.v1.js" "$SITE/static/app.v2.js" || true) | grep -c '^[<>]')
[ "$changed" -ge 5 ] && [ "$changed" -le 12 ] || fail "version 2 changed $changed lines, not a few"
for v in 1 2; do
  printf '<!doctype html><html><head><title>v%s</title><script src="/static/app.v%s.js"></script></head>\n<body><pre id="out"></pre><script>document.getElementById("out").textContent = appReport(%s);</script></body></html>\n' \
    "$v" "$v" "$v" >"$SITE/page$v.html"
done
touch -d '10 days ago' "$SITE"/*.html "$SITE"/static/*  # a lifetime by heuristic freshness, for ferry and Chromium
start_static_origin "$SITE"

start_cache_named dict --origin "$ORIGIN" --dir "$TMP/cache" --dictionary-versioned
PORT=$(cat "$TMP/dict.port")
CL="http://localhost:$PORT"

/usr/bin/python3 - "$CL" "$ORIGIN" "$TMP" <<'PY' || fail "Chromium (see above)"
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["FERRY_SOURCE"], "tests/integration"))
from cdp import Browser, check

cache, origin, tmp = sys.argv[1:4]
def load(b, url):
    b.navigate(url)
    b.wait("document.getElementById('out') && document.getElementById('out').textContent.length > 0", what=url)
    return b.eval("document.documentElement.outerHTML")

def exchange(b, name):
    """What Chromium sent for and received of the last request whose URL ends with name."""
    ids = [e["params"]["requestId"] for e in b.events
           if e.get("method") == "Network.requestWillBeSent" and e["params"]["request"]["url"].endswith(name)]
    check(ids, "Chromium did not ask for " + name)
    rid = ids[-1]
    sent = {}
    got = {}
    size = None
    for e in b.events:
        p = e.get("params", {})
        if p.get("requestId") != rid:
            continue
        if e["method"] == "Network.requestWillBeSentExtraInfo":
            sent = {k.lower(): v for k, v in p["headers"].items()}
        elif e["method"] == "Network.responseReceived":
            got = {k.lower(): v for k, v in p["response"]["headers"].items()}
        elif e["method"] == "Network.loadingFinished":
            size = p["encodedDataLength"]
    return sent, got, size

with open(os.path.join(tmp, "chromium.log"), "w") as log:
    with Browser(["--user-data-dir=" + os.path.join(tmp, "profile-origin")], log=log) as b:
        want1, want2 = load(b, origin + "/page1.html"), load(b, origin + "/page2.html")
    check('"app":2' in want2 and '"doubled":[8,10]' in want2, "version 2's script did not run at the origin: " + want2[:300])
    with Browser(["--user-data-dir=" + os.path.join(tmp, "profile")], log=log) as b:
        b.call("Network.enable")
        check(load(b, cache + "/page1.html") == want1, "page 1 through ferry differs from the origin's")
        sent1, got1, _ = exchange(b, "/static/app.v1.js")
        check(got1.get("use-as-dictionary") == 'match="/static/app.*.js"',
              "version 1 was not marked as a dictionary: %r" % got1.get("use-as-dictionary"))
        b.wait("new Promise(r => setTimeout(() => r(true), 500))")  # the dictionary is stored as the load ends
        check(load(b, cache + "/page2.html") == want2, "page 2 through ferry differs from the origin's")
        sent2, got2, size2 = exchange(b, "/static/app.v2.js")
        check("available-dictionary" in sent2, "Chromium sent no Available-Dictionary: %r" % sent2)
        check("dcz" in sent2.get("accept-encoding", ""), "Chromium did not offer dcz: %r" % sent2.get("accept-encoding"))
        check(got2.get("content-encoding") == "dcz", "version 2 came as %r, not dcz" % got2.get("content-encoding"))
        check("available-dictionary" in got2.get("vary", "").lower(), "no Vary on Available-Dictionary: %r" % got2.get("vary"))
        with open(os.path.join(tmp, "chromium.figures"), "w") as f:
            f.write("%s %d\n" % (sent2["available-dictionary"], size2))
        print("chromium: app.v2.js as dcz, %d bytes on the wire (headers included); accept-encoding: %s"
              % (size2, sent2["accept-encoding"]))
PY

# The figure: body bytes of version 2 as ferry sent it, beside one-shot
# zstd -3 and brotli -11 without a dictionary.
read -r AD _ <"$TMP/chromium.figures"
dcz_bytes=$(metric "$C" 'ferry_cache_response_bytes_total{encoding="dcz"}')
[ "$(metric "$C" 'ferry_cache_responses_total{encoding="dcz"}')" = 1 ] || fail "ferry did not answer one dcz"
zstd_bytes=$(zstd -3 -c -q "$SITE/static/app.v2.js" | wc -c)
br_bytes=$(brotli -q 11 -c "$SITE/static/app.v2.js" | wc -c)
plain_bytes=$(wc -c <"$SITE/static/app.v2.js")
echo "figure: app.v2.js $plain_bytes bytes: dcz $dcz_bytes, zstd -3 $zstd_bytes ($((zstd_bytes / dcz_bytes))x dcz), brotli -11 $br_bytes ($((br_bytes / dcz_bytes))x dcz)"
[ $((dcz_bytes * 10)) -le "$zstd_bytes" ] || fail "dcz ($dcz_bytes bytes) is not 10x smaller than zstd -3 ($zstd_bytes)"

# The same answer to curl: decodes with zstd's CLI against version 1.
curl -sf -H "Accept-Encoding: zstd, dcz" -H "Available-Dictionary: $AD" -H "Sec-Fetch-Dest: script" \
  -D "$TMP/h" -o "$TMP/v2.dcz" "$CL/static/app.v2.js" || fail "curl with the dictionary"
[ "$(header "$TMP/h" content-encoding)" = dcz ] || fail "curl did not get dcz: $(cat "$TMP/h")"
[ "$(header "$TMP/h" x-cache)" = HIT ] || fail "the dcz answer was not a hit"
zstd -d -q -D "$SITE/static/app.v1.js" --long=27 -c "$TMP/v2.dcz" >"$TMP/v2.js" 2>"$TMP/zstd.err" ||
  fail "zstd -D could not decode the dcz body: $(cat "$TMP/zstd.err")"
cmp -s "$TMP/v2.js" "$SITE/static/app.v2.js" || fail "the dcz body does not decode to version 2"
[ "$(metric "$C" 'ferry_cache_variant_encode_bytes_total{encoding="dcz"}')" = "$plain_bytes" ] ||
  fail "the dcz answer was made more than once"
# Without dcz, or with a dictionary ferry never served: the ordinary answer.
curl -sf -H "Accept-Encoding: zstd" -H "Available-Dictionary: $AD" -D "$TMP/h" -o /dev/null "$CL/static/app.v2.js"
[ "$(header "$TMP/h" content-encoding)" = zstd ] || fail "a client without dcz got $(header "$TMP/h" content-encoding)"
curl -sf -H "Accept-Encoding: zstd, dcz" -H "Available-Dictionary: :$(printf other | openssl dgst -sha256 -binary | base64):" \
  -D "$TMP/h" -o /dev/null "$CL/static/app.v2.js"
[ "$(header "$TMP/h" content-encoding)" = zstd ] || fail "an unknown dictionary got $(header "$TMP/h" content-encoding)"
[ "$(metric "$C" ferry_cache_dictionary_misses_total)" -ge 1 ] || fail "the unknown dictionary was not counted"
# Over plain http on a name that is not loopback: no mark (not a secure context).
curl -sf -H "Host: example.test:$PORT" -D "$TMP/h" -o /dev/null "$C/static/app.v1.js"
[ -z "$(header "$TMP/h" use-as-dictionary)" ] || fail "marked a dictionary for an insecure context"

# A fleet: two lower tiers over one parent that marks. The old version
# goes through one lower tier, the new one through the other, which has
# never seen the dictionary: it asks the parent for it by its hash.
start_cache_named parent --origin "$ORIGIN" --dir "$TMP/parent" --dictionary-versioned
PARENT=$C
start_cache_named edge1 --parent "$PARENT" --origin "$ORIGIN" --dir "$TMP/edge1"
E1="http://localhost:$(cat "$TMP/edge1.port")"
start_cache_named edge2 --parent "$PARENT" --origin "$ORIGIN" --dir "$TMP/edge2"
E2="http://localhost:$(cat "$TMP/edge2.port")"
curl -sf -H "Accept-Encoding: zstd" -D "$TMP/h" -o /dev/null "$E1/static/app.v1.js" || fail "edge1: app.v1.js"
[ "$(header "$TMP/h" use-as-dictionary)" = 'match="/static/app.*.js"' ] || fail "edge1 did not pass on the parent's mark: $(cat "$TMP/h")"
[ "$(metric "$E1" ferry_cache_dictionaries_kept_total)" = 1 ] || fail "edge1 did not keep the dictionary"
curl -sf -H "Accept-Encoding: zstd, dcz" -H "Available-Dictionary: $AD" -D "$TMP/h" -o "$TMP/v2.edge.dcz" \
  "$E2/static/app.v2.js" || fail "edge2: app.v2.js"
[ "$(header "$TMP/h" content-encoding)" = dcz ] || fail "edge2 did not answer dcz with the parent's dictionary: $(cat "$TMP/h")"
zstd -d -q -D "$SITE/static/app.v1.js" -c "$TMP/v2.edge.dcz" | cmp -s - "$SITE/static/app.v2.js" ||
  fail "edge2's dcz does not decode to version 2"
# Two: the parent's, and version 2 itself (marked too, for version 3).
[ "$(metric "$E2" ferry_cache_dictionaries_kept_total)" = 2 ] ||
  fail "edge2 kept $(metric "$E2" ferry_cache_dictionaries_kept_total) dictionaries, not the parent's and its own"
# The parent gives dictionaries to admin addresses only, by a valid name.
code=$(curl -s -o /dev/null -w '%{http_code}' "$PARENT/_ferry/dictionary/xyz")
[ "$code" = 400 ] || fail "a bad dictionary name got $code"
code=$(curl -s -o /dev/null -w '%{http_code}' "$PARENT/_ferry/dictionary/$(printf other | sha256sum | cut -c1-64)")
[ "$code" = 404 ] || fail "an unknown dictionary got $code"
echo "fleet: edge2 answered dcz ($(wc -c <"$TMP/v2.edge.dcz") bytes) with the dictionary edge1's client got, from the parent"
echo "cache dictionary: ok"
