#!/usr/bin/env bash
# Bad input gets one clear line naming the location and the cause, a
# non-zero exit, no secret in the output, and nothing left behind.
source "$(dirname "$0")/lib.sh"
start_test_s3
use_endpoint
printf 'data\n' >"$TMP/f.txt"
"$FERRY" cp "$TMP/f.txt" s3://bkt/exists.txt

# expect_error WANT_SUBSTRING CMD...: fails, one stderr line, contains WANT.
expect_error() {
  local want=$1; shift
  local rc=0
  "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
  [ "$rc" -ne 0 ] || fail "succeeded: $*"
  [ "$(wc -l <"$TMP/err")" -eq 1 ] || { cat "$TMP/err" >&2; fail "not one line: $*"; }
  grep -qF -- "$want" "$TMP/err" || fail "stderr '$(cat "$TMP/err")' lacks '$want' for: $*"
  grep -qF -- "$TEST_SECRET" "$TMP/err" && fail "secret leaked in: $(cat "$TMP/err")"
  echo "ok: $(cat "$TMP/err")"
}

expect_error "ferry: s3://: missing bucket name" "$FERRY" ls s3://
expect_error 'unknown scheme "gcs"' "$FERRY" cp gcs://b/k "$TMP/x"
expect_error "invalid bucket name" "$FERRY" ls "s3://A_/k"
expect_error "file:///absolute" "$FERRY" ls file://host/x
expect_error "ferry: s3://nosuchbucket: no such bucket (404 NoSuchBucket)" "$FERRY" ls s3://nosuchbucket
expect_error "ferry: s3://bkt/nokey: no such key (404" "$FERRY" cp s3://bkt/nokey "$TMP/nokey"
[ ! -e "$TMP/nokey" ] || fail "a failed download created a file"
expect_error "names a prefix, not an object" "$FERRY" cp s3://bkt/dir/ "$TMP/"
expect_error "No such file or directory" "$FERRY" cp "$TMP/missing.txt" s3://bkt/x
expect_error "bad size" "$FERRY" cp --part-size lots "$TMP/f.txt" s3://bkt/x

# Credentials: missing, wrong secret, unknown key id, unknown profile.
expect_error "no credentials" env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY "$FERRY" ls s3://bkt
expect_error "signature does not match (wrong secret key?) (403 SignatureDoesNotMatch)" \
  env AWS_SECRET_ACCESS_KEY=not-the-secret "$FERRY" ls s3://bkt
expect_error "access key id not recognised (403 InvalidAccessKeyId)" \
  env AWS_ACCESS_KEY_ID=AKIDUNKNOWN "$FERRY" cp s3://bkt/exists.txt "$TMP/y"
expect_error "profile nosuch not found" "$FERRY" ls --profile nosuch s3://bkt
expect_error "bad port" env AWS_ENDPOINT_URL=http://127.0.0.1:99999 "$FERRY" ls s3://bkt
# Secrets are never on the command line, so never in ps: ferry has no flag for them.
"$FERRY" cp --help | grep -qi secret && fail "a flag takes a secret"

# Unreachable endpoints fail in bounded time: a closed port, and a listener
# that accepts and never answers (with --timeout 1 --retries 2).
closed=$(free_port)
start=$(date +%s)
expect_error "connection refused" env AWS_ENDPOINT_URL="http://127.0.0.1:$closed" "$FERRY" ls s3://bkt
silent=$(free_port)
/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
conns = []
while True:
    c, _ = s.accept(); conns.append(c)
' "$silent" &
PIDS+=($!)
wait_port "$silent"
expect_error "timed out" env AWS_ENDPOINT_URL="http://127.0.0.1:$silent" \
  "$FERRY" ls --timeout 1 --retries 2 s3://bkt
elapsed=$(( $(date +%s) - start ))
[ "$elapsed" -lt 20 ] || fail "unreachable endpoints took ${elapsed}s"

# A failed cp leaves nothing behind. Download: every GET of the key is cut
# mid-body, so retries run out; no file and no temp file remain.
make_file "$TMP/big.bin" $((3 << 20))
"$FERRY" cp "$TMP/big.bin" s3://bkt/cut.bin
mkdir "$TMP/dl"
admin POST /_admin/faults '{"kind":"reset","op":"get","key_regex":"^cut\\.bin$"}' >/dev/null
expect_error "s3://bkt/cut.bin" "$FERRY" cp --retries 2 s3://bkt/cut.bin "$TMP/dl/cut.bin"
[ -z "$(ls -A "$TMP/dl")" ] || fail "failed download left: $(ls -A "$TMP/dl")"
# Upload: CompleteMultipartUpload answers 200 with an error body, every time;
# the upload is aborted and no object appears.
admin POST /_admin/faults '{"kind":"complete-200-error","op":"complete"}' >/dev/null
make_file "$TMP/mp.bin" $((12 << 20))
expect_error "internal error" "$FERRY" cp --retries 2 --multipart-threshold 5M --part-size 5M \
  "$TMP/mp.bin" s3://bkt/mp.bin
admin POST /_admin/faults '{}' >/dev/null
aws_s3 s3api list-multipart-uploads --bucket bkt --output json >"$TMP/mpu.json"
grep -q '"UploadId"' "$TMP/mpu.json" && fail "dangling multipart upload: $(cat "$TMP/mpu.json")"
expect_error "no such key" "$FERRY" cp s3://bkt/mp.bin "$TMP/mp.back"
echo "errors: ok"
