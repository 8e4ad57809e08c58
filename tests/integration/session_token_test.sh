#!/usr/bin/env bash
# Temporary credentials: with a server that demands a session token, ferry
# signs AWS_SESSION_TOKEN into every request (and profiles' aws_session_token
# too); without it the request is refused in one line.
source "$(dirname "$0")/lib.sh"
start_test_s3 --session-token "tok/en+with=odd chars"
use_endpoint
printf 'temporary\n' >"$TMP/f.txt"

AWS_SESSION_TOKEN="tok/en+with=odd chars" "$FERRY" cp "$TMP/f.txt" s3://bkt/t.txt
AWS_SESSION_TOKEN="tok/en+with=odd chars" "$FERRY" cp s3://bkt/t.txt "$TMP/back.txt"
same_bytes "$TMP/f.txt" "$TMP/back.txt"

rc=0
"$FERRY" ls s3://bkt 2>"$TMP/err" || rc=$?
[ "$rc" -ne 0 ] || fail "a request without the session token was accepted"
[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "not one line: $(cat "$TMP/err")"
grep -q "security token" "$TMP/err" || fail "unexpected error: $(cat "$TMP/err")"
echo "ok: $(cat "$TMP/err")"

# The same through a profile in the shared files.
cat >"$TMP/credentials" <<EOT
[temp]
aws_access_key_id = $TEST_KEY
aws_secret_access_key = $TEST_SECRET
aws_session_token = tok/en+with=odd chars
EOT
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY AWS_SHARED_CREDENTIALS_FILE="$TMP/credentials" \
  "$FERRY" ls --profile temp s3://bkt | grep -q t.txt || fail "profile with a session token"
echo "session token: ok"
