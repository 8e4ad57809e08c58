#!/usr/bin/env bash
# make demo: every workload ferry has so far, end to end, on embedded
# defaults. No external service and no credentials of yours: the S3 side is
# ferry's own test server on loopback with throwaway keys.
set -euo pipefail
BUILD=${1:-build}
FERRY="$BUILD/ferry"
TMP=$(mktemp -d /tmp/ferry-demo.XXXXXX)
SERVER_PID=
OTHER_PIDS=()
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null
  for p in "${OTHER_PIDS[@]:-}"; do [ -n "$p" ] && { kill "$p" 2>/dev/null || true; }; done
  rm -rf "$TMP"
}
trap cleanup EXIT
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "ferry version"
"$FERRY" version

step "start a local S3-compatible server (ferry-test-s3, bucket 'demo')"
"$BUILD/ferry-test-s3" --listen 127.0.0.1:0 --port-file "$TMP/port" --bucket demo \
    --access-key demo --secret-key demo-secret >"$TMP/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 100); do [ -s "$TMP/port" ] && break; sleep 0.1; done
export AWS_ENDPOINT_URL="http://127.0.0.1:$(cat "$TMP/port")"
export AWS_ACCESS_KEY_ID=demo AWS_SECRET_ACCESS_KEY=demo-secret AWS_REGION=us-east-1
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
echo "endpoint $AWS_ENDPOINT_URL"

step "make a 200 MiB file and a small text file"
head -c $((200 << 20)) /dev/urandom >"$TMP/big.bin"
printf 'hello from ferry\n' >"$TMP/hello.txt"
ls -l "$TMP/big.bin" "$TMP/hello.txt"

step "ferry cp: upload (multipart, 16 MiB parts in parallel)"
time "$FERRY" cp "$TMP/big.bin" s3://demo/images/big.bin
"$FERRY" cp --metadata owner=demo "$TMP/hello.txt" s3://demo/docs/
step "ferry ls s3://demo and ferry ls -r --json"
"$FERRY" ls s3://demo
"$FERRY" ls -r --json s3://demo

step "ferry cp: server-side copy, then download and compare bytes"
"$FERRY" cp s3://demo/images/big.bin s3://demo/images/copy.bin
time "$FERRY" cp s3://demo/images/copy.bin "$TMP/back.bin"
cmp "$TMP/big.bin" "$TMP/back.bin" && echo "round trip: identical bytes"

step "ferry migrate: a 2,000-file tree into s3://demo/tree/ as a resumable job"
mkdir -p "$TMP/tree"
for d in $(seq 1 20); do
  mkdir -p "$TMP/tree/dir$d"
  for f in $(seq 1 100); do echo "file $f of dir $d" >"$TMP/tree/dir$d/f$f.txt"; done
done
STATE="$TMP/state"
time "$FERRY" migrate --state "$STATE" "$TMP/tree" s3://demo/tree/
"$FERRY" migrate --state "$STATE" status

step "ferry migrate again: unchanged objects are skipped (same size and MD5)"
"$FERRY" migrate --state "$STATE" "$TMP/tree" s3://demo/tree/

step "ferry migrate killed mid-job (SIGKILL), then resumed to an exact count"
set +e
FERRY_CRASH_AT=finish:3 "$FERRY" migrate --state "$STATE" --concurrency 8 s3://demo/tree/ "$TMP/back-tree" >"$TMP/job.txt"
echo "exit code $? (killed)"
set -e
JOB=$(awk '/^job /{print $2}' "$TMP/job.txt")
"$FERRY" migrate --state "$STATE" status "$JOB" | grep -E "^(job|state|listed|transferred|note)"
"$FERRY" migrate --state "$STATE" resume "$JOB"
diff -r -x '.*' "$TMP/tree" "$TMP/back-tree" && echo "round trip: identical trees"

step "ferry migrate verify: the independent check, then damage behind ferry's back"
"$FERRY" migrate verify "$TMP/tree" s3://demo/tree/
echo "changed" >"$TMP/changed.txt"
"$FERRY" cp "$TMP/changed.txt" "s3://demo/tree/$(cd "$TMP/tree" && find . -type f -printf '%P\n' | sort | head -1)" -q
set +e
"$FERRY" migrate verify "$TMP/tree" s3://demo/tree/
echo "exit code $? (5: something is missing or different)"
set -e
step "an incremental pass with --delete: copies what changed, removes what the source lost"
rm "$TMP/tree/$(cd "$TMP/tree" && find . -type f -printf '%P\n' | sort | tail -1)"
"$FERRY" migrate --state "$STATE" "$TMP/tree" s3://demo/tree/ --delete --max-delete 10 --verify

step "the worker pool: a detached job, run by two ferry worker processes at once"
# Here on the embedded SQLite file; with --state postgres://... the workers
# can be on any number of machines.
"$FERRY" migrate --state "$STATE" --concurrency 8 --detach s3://demo/tree/ "$TMP/pool-tree"
"$FERRY" worker --state "$STATE" --once -q &
W1=$!
"$FERRY" worker --state "$STATE" --once -q
wait $W1
diff -r -x '.*' "$TMP/tree" "$TMP/pool-tree" && echo "pool copy: identical trees"
# Finished jobs live in the archive: list shows the ones at work, --all all.
"$FERRY" migrate --state "$STATE" list --all

step "ferry server: the migration API and dashboard on the same state"
"$FERRY" server --state "$STATE" --listen 127.0.0.1:0 --port-file "$TMP/api.port" --run-jobs 1 \
  --sample-interval 1 >"$TMP/api.log" 2>&1 &
API_PID=$!
for _ in $(seq 1 50); do [ -s "$TMP/api.port" ] && break; sleep 0.1; done
API="http://127.0.0.1:$(cat "$TMP/api.port")"
JOB=$(curl -sf -XPOST "$API/v1/jobs" --data-binary "{\"src\": \"$TMP/tree\", \"dst\": \"$TMP/api-tree\"}" |
  /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["job"])')
echo "POST /v1/jobs made $JOB; the server's own runner (--run-jobs 1) runs it"
for _ in $(seq 1 100); do
  curl -sf "$API/v1/jobs/$JOB" | grep -q '"state":"completed"' && break
  sleep 0.2
done
curl -sf "$API/v1/jobs/$JOB" | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
print("GET /v1/jobs/%s: %s, %d listed, %d transferred, %d bytes" % (j["job"], j["state"], j["listed"], j["transferred"], j["bytes"]))'
curl -sf "$API/" | grep -o '<title>[^<]*</title>' | sed "s|^|dashboard at $API/: |"
kill "$API_PID"
wait "$API_PID" 2>/dev/null || true

step "ferry gateway: an S3 endpoint in front of a running migration"
# The job is made, not run: reads through the gateway copy on demand what it
# has not copied, a write through it is kept, then a worker finishes the job.
GWJOB=$("$FERRY" migrate --state "$STATE" --concurrency 8 --detach --json s3://demo/tree/ "$TMP/gw-tree" |
  /usr/bin/python3 -c 'import json,sys; print(json.loads(sys.stdin.read().splitlines()[-1])["job"])')
printf 'gwkey gwsecret\n' >"$TMP/gw.keys"
"$FERRY" gateway --job "$GWJOB" --state "$STATE" --listen 127.0.0.1:0 --port-file "$TMP/gw.port" \
  --credentials "$TMP/gw.keys" >"$TMP/gw.log" 2>&1 &
GW_PID=$!
OTHER_PIDS+=("$GW_PID")
for _ in $(seq 1 50); do [ -s "$TMP/gw.port" ] && break; sleep 0.1; done
GW="http://127.0.0.1:$(cat "$TMP/gw.port")/gw-tree"
gw() { curl -sf --aws-sigv4 aws:amz:us-east-1:s3 --user gwkey:gwsecret "$@"; }
KEY=$(cd "$TMP/tree" && find . -type f -printf '%P\n' | sort | sed -n 1p)
gw -D - -o "$TMP/gw-read" "$GW/$KEY" | grep -i '^x-ferry-answer' | sed "s|^|GET $KEY: |"
cmp "$TMP/gw-read" "$TMP/tree/$KEY" && echo "same bytes as the source"
echo "written through the gateway" >"$TMP/gw-put"
gw -X PUT --data-binary @"$TMP/gw-put" "$GW/$KEY" -o /dev/null && echo "PUT $KEY through the gateway"
"$FERRY" worker --state "$STATE" --once -q
"$FERRY" migrate --state "$STATE" status "$GWJOB"
echo "after the job, $KEY holds: $(cat "$TMP/gw-tree/$KEY") (the job did not overwrite it)"
gw -D - -o /dev/null "$GW/$KEY" | grep -i '^x-ferry-answer' | sed "s|^|GET $KEY now: |"
kill "$GW_PID"
wait "$GW_PID" 2>/dev/null || true

step "ferry cache serve: a caching proxy that keeps text zstd-compressed at rest"
mkdir -p "$TMP/site"
cp -r /usr/share/doc/python3.11/html/library "$TMP/site/" 2>/dev/null \
  || for i in $(seq 1 50); do seq 1 5000 | sed "s/^/<p>line of page $i: /" >"$TMP/site/page$i.html"; done
# Two versions of a script bundle (jQuery when the test packages are in,
# else text of the pages), the second with one line changed: a browser
# holding the first as a compression dictionary (RFC 9842) gets a delta.
mkdir -p "$TMP/site/static"
if [ -f /usr/share/javascript/jquery/jquery.js ]; then
  cp /usr/share/javascript/jquery/jquery.js "$TMP/site/static/app.v1.js"
else
  cat "$TMP"/site/library/*.html 2>/dev/null | head -c 300000 >"$TMP/site/static/app.v1.js" || true
  [ -s "$TMP/site/static/app.v1.js" ] || seq 1 60000 >"$TMP/site/static/app.v1.js"
fi
sed '10s/$/ \/\/ edited in version 2/' "$TMP/site/static/app.v1.js" >"$TMP/site/static/app.v2.js"
# Last modified a month ago, as a site's files are: fresh by heuristic
# (a tenth of that age, at most a day), so the requests below are hits.
find "$TMP/site" -type f -exec touch -d '30 days ago' {} +
(cd "$TMP/site" && exec /usr/bin/python3 -m http.server --bind 127.0.0.1 0 >"$TMP/origin.log" 2>&1) &
OTHER_PIDS+=($!)
for _ in $(seq 1 50); do grep -q 'port' "$TMP/origin.log" 2>/dev/null && break; sleep 0.1; done
ORIGIN_PORT=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$TMP/origin.log" | head -1)
"$FERRY" cache serve --origin "http://127.0.0.1:$ORIGIN_PORT" --listen 127.0.0.1:0 \
    --port-file "$TMP/cache.port" --dir "$TMP/cache" --default-ttl 5m --dictionary-versioned >"$TMP/cache.log" 2>&1 &
OTHER_PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$TMP/cache.port" ] && break; sleep 0.1; done
CACHE="http://127.0.0.1:$(cat "$TMP/cache.port")"
echo "origin http://127.0.0.1:$ORIGIN_PORT (python3 -m http.server), cache $CACHE"
(cd "$TMP/site" && find . -type f -printf '%P\n') >"$TMP/pages"
logical=0
while read -r page; do
  logical=$((logical + $(curl -s -o /dev/null -w '%{size_download}' "$CACHE/$page")))
done <"$TMP/pages"
echo "filled $(wc -l <"$TMP/pages") pages, $logical bytes as the origin sent them"
echo "on disk in the cache: $(du -sb "$TMP/cache" | cut -f1) bytes"
page=$(head -1 "$TMP/pages")
for enc in identity zstd; do
  curl -s -D - -o "$TMP/body.$enc" -H "Accept-Encoding: $enc" "$CACHE/$page" \
    | grep -iE '^(x-cache|content-encoding|content-length|etag)' | tr -d '\r' | sed "s/^/[$enc] /"
done
zstd -dcq "$TMP/body.zstd" | cmp - "$TMP/site/$page" && cmp "$TMP/body.identity" "$TMP/site/$page" \
  && echo "both answers decode to the origin's bytes"
# --dictionary-versioned marks app.v1.js as a dictionary for app.*.js; a
# client holding it names its SHA-256 and gets app.v2.js as dcz.
curl -s -D - -o /dev/null "$CACHE/static/app.v1.js" | grep -i '^use-as-dictionary' | tr -d '\r' | sed 's/^/[app.v1.js] /'
HASH=$(/usr/bin/python3 -c 'import base64, hashlib, sys; print(base64.b64encode(hashlib.sha256(open(sys.argv[1], "rb").read()).digest()).decode())' "$TMP/site/static/app.v1.js")
curl -s -D - -o "$TMP/app.v2.dcz" -H "Accept-Encoding: zstd, dcz" -H "Available-Dictionary: :$HASH:" "$CACHE/static/app.v2.js" \
  | grep -iE '^(content-encoding|content-length)' | tr -d '\r' | sed 's/^/[app.v2.js, holding v1] /'
echo "app.v2.js is $(wc -c <"$TMP/site/static/app.v2.js") bytes; zstd -3 alone: $(zstd -3 -c -q "$TMP/site/static/app.v2.js" | wc -c)"
zstd -dcq -D "$TMP/site/static/app.v1.js" "$TMP/app.v2.dcz" | cmp - "$TMP/site/static/app.v2.js" \
  && echo "the dcz answer decodes against app.v1.js to app.v2.js"

step "ferry snapshot + ferry volume: lazy block volumes over NBD"
mkdir -p "$TMP/rootfs/etc" "$TMP/rootfs/usr"
cp -r /usr/share/doc/python3* "$TMP/rootfs/usr/" 2>/dev/null || seq 1 200000 >"$TMP/rootfs/usr/numbers"
echo "ferry demo" >"$TMP/rootfs/etc/hostname"
/sbin/mke2fs -q -t ext4 -d "$TMP/rootfs" "$TMP/disk.img" 128M
"$FERRY" snapshot create "$TMP/disk.img" s3://demo/snaps/base
"$FERRY" snapshot ls s3://demo/snaps
"$FERRY" volume serve --pool "$TMP/pool-a" --pool "$TMP/pool-b" --nbd 127.0.0.1:0 --api 127.0.0.1:0 \
    --port-file "$TMP/vol.ports" --hydration-rate 4M --learn-orders --learn-settle 1s >"$TMP/volumes.log" 2>&1 &
OTHER_PIDS+=($!)
for _ in $(seq 1 50); do [ -s "$TMP/vol.ports" ] && break; sleep 0.1; done
read -r NBD_PORT API_PORT <"$TMP/vol.ports"
"$FERRY" volume create vm --from s3://demo/snaps/base --count 3 --api "127.0.0.1:$API_PORT"
if command -v nbdinfo >/dev/null; then nbdinfo --size "nbd://127.0.0.1:$NBD_PORT/vm-1"; fi
if command -v qemu-img >/dev/null; then
  time qemu-img compare -f raw -F raw "nbd://127.0.0.1:$NBD_PORT/vm-1" "$TMP/disk.img"
fi
"$FERRY" volume ls --api "127.0.0.1:$API_PORT"
# --learn-orders: once vm-1's reads settle, what it touched first joins the
# snapshot's prefetch order, for the clones made after it.
for _ in $(seq 1 100); do
  "$FERRY" snapshot info s3://demo/snaps/base --json | grep -q '"learned_clones":0' || break
  sleep 0.1
done
"$FERRY" snapshot info s3://demo/snaps/base

step "errors are one line"
"$FERRY" cp s3://demo/no/such/key "$TMP/x" || true
"$FERRY" ls s3://nosuchbucket || true
AWS_SECRET_ACCESS_KEY=wrong "$FERRY" ls s3://demo || true
echo
echo "demo finished"
