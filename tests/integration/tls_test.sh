#!/usr/bin/env bash
# HTTPS: ferry verifies the server's certificate against AWS_CA_BUNDLE (or
# the system store), fails in one line when it cannot, and interoperates with
# awscli over TLS.
source "$(dirname "$0")/lib.sh"
start_test_s3 --tls --cert-out "$TMP/cert.pem"
S3_URL="https://127.0.0.1:$S3_PORT"
use_endpoint

make_file "$TMP/f.bin" $((9 << 20))
AWS_CA_BUNDLE="$TMP/cert.pem" "$FERRY" cp --multipart-threshold 5M --part-size 5M \
  "$TMP/f.bin" s3://bkt/tls.bin
AWS_CA_BUNDLE="$TMP/cert.pem" "$FERRY" cp s3://bkt/tls.bin "$TMP/back.bin"
same_bytes "$TMP/f.bin" "$TMP/back.bin"
AWS_CA_BUNDLE="$TMP/cert.pem" "$AWS" --endpoint-url "$S3_URL" s3 cp s3://bkt/tls.bin "$TMP/aws.bin" --quiet
same_bytes "$TMP/f.bin" "$TMP/aws.bin"
AWS_CA_BUNDLE="$TMP/cert.pem" "$FERRY" ls s3://bkt | grep -q tls.bin || fail "ls over TLS"

# The system store does not know our self-signed certificate: refused, at once.
start=$(date +%s)
rc=0
AWS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt "$FERRY" ls s3://bkt 2>"$TMP/err" || rc=$?
[ "$rc" -ne 0 ] || fail "an unverifiable certificate was accepted"
grep -q "certificate verify failed" "$TMP/err" || fail "unexpected error: $(cat "$TMP/err")"
[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "not one line: $(cat "$TMP/err")"
[ $(( $(date +%s) - start )) -lt 5 ] || fail "a certificate failure was retried"
echo "ok: $(cat "$TMP/err")"

# A CA bundle that cannot be loaded is an error, not a silent fallback.
rc=0
AWS_CA_BUNDLE="$TMP/missing.pem" "$FERRY" ls s3://bkt 2>"$TMP/err" || rc=$?
[ "$rc" -ne 0 ] || fail "a missing CA bundle was ignored"
grep -q "cannot load CA bundle $TMP/missing.pem" "$TMP/err" || fail "unexpected error: $(cat "$TMP/err")"
echo "ok: $(cat "$TMP/err")"
echo "tls: ok"
