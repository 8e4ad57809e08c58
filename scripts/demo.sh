#!/usr/bin/env bash
# make demo: every workload ferry has so far, end to end, on embedded
# defaults. No external service and no credentials of yours: the S3 side is
# ferry's own test server on loopback with throwaway keys.
set -euo pipefail
BUILD=${1:-build}
FERRY="$BUILD/ferry"
TMP=$(mktemp -d /tmp/ferry-demo.XXXXXX)
SERVER_PID=
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; rm -rf "$TMP"; }
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
"$FERRY" migrate --state "$STATE" list

step "errors are one line"
"$FERRY" cp s3://demo/no/such/key "$TMP/x" || true
"$FERRY" ls s3://nosuchbucket || true
AWS_SECRET_ACCESS_KEY=wrong "$FERRY" ls s3://demo || true
echo
echo "demo finished"
