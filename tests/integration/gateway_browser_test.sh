#!/usr/bin/env bash
# A browser uploads through `ferry gateway` as a web application makes it
# do: its back end signs the URLs (the AWS SDK for JavaScript's presigner),
# a page on another origin PUTs a file to the presigned URL with fetch and
# reads it back with a presigned GET, which CORS (--cors-origin) allows:
#  - headless Chromium on the allowed origin: the preflight passes, the
#    bytes read back equal the bytes sent, and the destination holds them;
#  - the same page on an origin not allowed (localhost instead of
#    127.0.0.1): the browser's preflight is refused, fetch fails, nothing
#    is stored;
#  - curl checks the answers' CORS headers and a refused preflight's error.
source "$(dirname "$0")/lib.sh"
need curl
need chromium
[ -x "$AWS" ] || skip "awscli not installed"
need_js_sdk presign_urls.mjs

start_migrate_pair
seed_source 5 1 1024
# The web application's pages, on their own origin.
mkdir -p "$TMP/www"
cp "$FERRY_SOURCE/tests/integration/www/presigned_upload.html" "$TMP/www/"
/usr/bin/python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$TMP/www" >"$TMP/www.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do grep -q "port [0-9]" "$TMP/www.log" && break; sleep 0.1; done
PAGE_PORT=$(sed -n 's/.* port \([0-9]*\).*/\1/p' "$TMP/www.log" | head -1)
[ -n "$PAGE_PORT" ] || fail "the page server did not start: $(cat "$TMP/www.log")"
ORIGIN="http://127.0.0.1:$PAGE_PORT"

start_job_gateway --cors-origin "$ORIGIN" --cors-max-age 60
metric() { curl -sf "$GW_URL/_ferry/metrics" | awk -v n="$1${2:-}" '$1 == n {print $2; exit}'; }

node "$TMP/sdk/presign_urls.mjs" "$GW_URL" gwkey gwsecret bkt 300 \
  PUT:browser/upload.bin GET:browser/upload.bin PUT:browser/refused.bin GET:browser/refused.bin \
  >"$TMP/www/urls.json" || fail "the SDK's presigner"

# A bad flag value is one line.
out=$("$FERRY" gateway --job "$JOB" --state "$STATE" --credentials "$TMP/gw.keys" \
  --cors-origin "$ORIGIN/app" 2>&1) && fail "--cors-origin with a path was taken"
[ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "no path" || fail "--cors-origin with a path: $out"

# What a browser's preflight gets, and what it gets when not allowed.
hdr=$(curl -s -D - -o /dev/null -X OPTIONS "$GW_URL/bkt/browser/upload.bin" -H "Origin: $ORIGIN" \
  -H "Access-Control-Request-Method: PUT" -H "Access-Control-Request-Headers: content-type")
echo "$hdr" | grep -qi "^access-control-allow-origin: $ORIGIN" || fail "preflight: $hdr"
echo "$hdr" | grep -qi "^access-control-allow-headers: content-type" || fail "preflight headers: $hdr"
echo "$hdr" | grep -qi "^access-control-max-age: 60" || fail "preflight max-age: $hdr"
code=$(curl -s -o "$TMP/refused.xml" -w '%{http_code}' -X OPTIONS "$GW_URL/bkt/browser/upload.bin" \
  -H "Origin: http://evil.example" -H "Access-Control-Request-Method: PUT")
[ "$code" = 403 ] && grep -q AccessForbidden "$TMP/refused.xml" || fail "a foreign preflight: $code $(cat "$TMP/refused.xml")"
# An actual answer (an error here: unsigned) names the allowed origin only.
curl -s -D "$TMP/h" -o /dev/null "$GW_URL/bkt/d00/o00000" -H "Origin: $ORIGIN"
grep -qi "^access-control-allow-origin: $ORIGIN" "$TMP/h" && grep -qi "^vary: Origin" "$TMP/h" ||
  fail "an answer to the allowed origin: $(cat "$TMP/h")"
curl -s -D "$TMP/h" -o /dev/null "$GW_URL/bkt/d00/o00000" -H "Origin: http://evil.example"
grep -qi "^access-control-allow-origin" "$TMP/h" && fail "a foreign origin was allowed: $(cat "$TMP/h")"

/usr/bin/python3 - "$ORIGIN" "$PAGE_PORT" "$TMP" <<'PY' || fail "the page in Chromium (see above)"
import os, sys
sys.path.insert(0, os.path.join(os.environ["FERRY_SOURCE"], "tests/integration"))
from cdp import Browser, check

origin, port, tmp = sys.argv[1:4]
with open(os.path.join(tmp, "chromium.log"), "w") as log, \
        Browser(["--user-data-dir=" + os.path.join(tmp, "profile")], log=log) as b:
    b.navigate(origin + "/presigned_upload.html")
    b.wait("document.body.dataset.done === 'yes'", what="the allowed page's upload")
    got = b.eval("JSON.stringify(document.body.dataset)")
    check(b.eval("document.body.dataset.result") == "same", "allowed origin: %s" % got)
    check(len(b.eval("document.body.dataset.etag")) > 2, "the page could not read ETag: %s" % got)
    print("allowed origin:", got)
    b.navigate("http://localhost:%s/presigned_upload.html?object=browser/refused.bin" % port)
    b.wait("document.body.dataset.done === 'yes'", what="the refused page's upload")
    got = b.eval("JSON.stringify(document.body.dataset)")
    check(b.eval("document.body.dataset.result") == "blocked", "foreign origin: %s" % got)
    print("foreign origin:", got)
PY

/usr/bin/python3 -c "
import sys; n = 200000
sys.stdout.buffer.write(bytes((i * 13 + (i >> 9)) & 0xFF for i in range(n)))" >"$TMP/want"
awsp dst s3api get-object --bucket bkt --key browser/upload.bin "$TMP/got" >/dev/null ||
  fail "the browser's upload is not at the destination"
cmp -s "$TMP/got" "$TMP/want" || fail "the destination holds other bytes than the page sent"
awsp dst s3api head-object --bucket bkt --key browser/refused.bin >/dev/null 2>&1 &&
  fail "the refused origin's upload was stored"
allowed=$(metric ferry_gateway_cors_preflights_total '{result="allowed"}')
refused=$(metric ferry_gateway_cors_preflights_total '{result="refused"}')
[ "${allowed:-0}" -ge 2 ] && [ "${refused:-0}" -ge 2 ] ||
  fail "preflights allowed $allowed, refused $refused (want >= 2 each: curl's and Chromium's)"
echo "preflights: $allowed allowed, $refused refused"
echo "PASS"
