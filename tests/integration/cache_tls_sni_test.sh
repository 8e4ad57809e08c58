#!/usr/bin/env bash
# The cache's TLS listener beside its plain one, seen by curl and openssl
# s_client verifying against a CA this test makes: a certificate chosen by
# the client's SNI name among several (the first by default; one a PEM chain
# through an intermediate CA), certificates
# reloaded on SIGHUP while a connection opened before goes on, a reload
# that cannot read its files keeping the old ones with one line of log, a
# certificate for another name or an expired one refused by curl, and TLS
# 1.1 refused by the server while 1.2 and 1.3 are served.
source "$(dirname "$0")/lib.sh"
need curl
need openssl
source "$FERRY_SOURCE/tests/integration/cache_lib.sh"
start_origin

cd "$TMP"
# The CA, kept the way `openssl ca` wants it (for the expired certificate).
mkdir -p newcerts && : >index.txt && echo 1000 >serial
cat >ca.cnf <<'EOF'
[ca]
default_ca = test_ca
[test_ca]
dir = .
database = index.txt
new_certs_dir = newcerts
serial = serial
certificate = ca.pem
private_key = ca.key
default_md = sha256
policy = any
copy_extensions = copy
unique_subject = no
[any]
commonName = supplied
EOF
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=ferry-test-ca \
  -keyout ca.key -out ca.pem 2>/dev/null
# cert NAME CN SAN [openssl ca dates...]: NAME.pem and NAME.key signed by the CA.
cert() {
  local name=$1 cn=$2 san=$3
  shift 3
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$cn" -addext "subjectAltName=$san" \
    -keyout "$name.key" -out "$name.csr" 2>/dev/null
  openssl ca -batch -config ca.cnf -in "$name.csr" -out "$name.pem" "$@" 2>/dev/null ||
    fail "openssl ca could not sign $name"
}
cert a a.test "DNS:a.test,IP:127.0.0.1" -days 2
cert b b.test "DNS:b.test,DNS:*.b.test" -days 2
cert renewed renewed.test "DNS:a.test,IP:127.0.0.1" -days 2
cert expired old.test "DNS:old.test" -startdate 20200101000000Z -enddate 20200201000000Z
# A chain: chain.test signed by an intermediate CA the root signed; the
# file holds the leaf and the intermediate, clients trust only the root.
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=ferry-test-intermediate \
  -keyout int.key -out int.csr 2>/dev/null
printf 'basicConstraints=critical,CA:true\nkeyUsage=critical,keyCertSign,cRLSign\n' >int.ext
openssl x509 -req -in int.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile int.ext -out int.pem 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=chain.test -keyout chain.key \
  -out chain.csr 2>/dev/null
echo "subjectAltName=DNS:chain.test" >chain.ext
openssl x509 -req -in chain.csr -CA int.pem -CAkey int.key -CAcreateserial -days 2 -extfile chain.ext \
  -out leaf.pem 2>/dev/null
cat leaf.pem int.pem >chain.pem
cp a.pem live.pem && cp a.key live.key

start_cache_named sni --origin "$ORIGIN" --dir "$TMP/cache" --listen-tls 127.0.0.1:0 --tls-port-file sni.tls.port \
  --tls-cert live.pem --tls-key live.key --tls-cert b.pem --tls-key b.key --tls-cert expired.pem --tls-key expired.key \
  --tls-cert chain.pem --tls-key chain.key
PID=$CACHE_PID
TP=$(cat sni.tls.port)
grep -q "has expired" sni.log || fail "loading an expired certificate was not logged"
curl -sf "$ORIGIN/text/a" -o a.orig

# subject NAME [curl args...]: the CN of the certificate curl verified for NAME.
subject() {
  local name=$1
  shift
  curl -sf -v --cacert ca.pem --resolve "$name:$TP:127.0.0.1" "$@" -o /dev/null "https://$name:$TP/text/a" 2>&1 |
    sed -n 's/^\*  subject: CN=\(.*\)$/\1/p' | tr -d '\r'
}

# --- Plain and TLS from one process; IP SAN and DNS names -------------------------------
curl -sf "$C/text/a" | cmp -s - a.orig || fail "plain --listen beside --listen-tls"
curl -sf --cacert ca.pem "https://127.0.0.1:$TP/text/a" | cmp -s - a.orig || fail "HTTPS to 127.0.0.1 (IP SAN)"
if curl -s --max-time 5 "http://127.0.0.1:$TP/text/a" -o /dev/null; then fail "plain HTTP answered on the TLS port"; fi
echo "ok: plain and HTTPS at once"

# --- SNI picks the certificate ------------------------------------------------------------
[ "$(subject a.test)" = a.test ] || fail "SNI a.test got $(subject a.test)"
[ "$(subject b.test)" = b.test ] || fail "SNI b.test got $(subject b.test)"
[ "$(subject img.b.test)" = b.test ] || fail "SNI img.b.test (wildcard) got $(subject img.b.test)"
[ "$(subject chain.test)" = chain.test ] || fail "SNI chain.test (a PEM chain) got $(subject chain.test)"
s_client() {  # s_client NAME [args...]: openssl's view of the handshake for server name NAME
  local name=$1
  shift
  openssl s_client -connect "127.0.0.1:$TP" -servername "$name" -CAfile ca.pem -verify_hostname "$name" \
    -verify_return_error "$@" </dev/null 2>&1
}
out=$(s_client b.test) || fail "s_client -servername b.test: $out"
grep -q "^subject=CN = b.test" <<<"$out" || fail "s_client -servername b.test: $(grep subject <<<"$out")"
grep -q "Verify return code: 0 (ok)" <<<"$out" || fail "s_client did not verify b.test"
out=$(s_client a.test) || fail "s_client -servername a.test: $out"
grep -q "^subject=CN = a.test" <<<"$out" || fail "s_client -servername a.test: $(grep subject <<<"$out")"
out=$(s_client chain.test -showcerts) || fail "s_client chain.test: $out"
grep -q "^ 1 s:CN = ferry-test-intermediate" <<<"$out" || fail "the intermediate was not sent: $out"
echo "ok: SNI (a.test, b.test, *.b.test, chain.test through an intermediate)"

# --- Certificates curl must refuse -----------------------------------------------------
# No certificate names c.test: the default (a.test) is served and refused.
rc=0
curl -s --cacert ca.pem --resolve "c.test:$TP:127.0.0.1" -o /dev/null "https://c.test:$TP/text/a" || rc=$?
[ "$rc" = 60 ] || fail "a certificate for another name: curl exit $rc, not 60"
rc=0
curl -s --cacert ca.pem --resolve "old.test:$TP:127.0.0.1" -o /dev/null "https://old.test:$TP/text/a" 2>err.txt || rc=$?
[ "$rc" = 60 ] || fail "an expired certificate: curl exit $rc, not 60"
out=$(s_client old.test) && fail "s_client accepted the expired certificate"
grep -q "certificate has expired" <<<"$out" || fail "s_client did not see the expiry: $out"
echo "ok: wrong name and expired refused"

# --- TLS versions -------------------------------------------------------------------------
out=$(openssl s_client -connect "127.0.0.1:$TP" -tls1_1 -cipher 'DEFAULT:@SECLEVEL=0' </dev/null 2>&1) &&
  fail "TLS 1.1 was accepted"
grep -q "alert protocol version" <<<"$out" || fail "TLS 1.1 not refused by the server: $out"
rc=0
curl -s --cacert ca.pem --tlsv1.1 --tls-max 1.1 --ciphers 'DEFAULT:@SECLEVEL=0' -o /dev/null \
  "https://127.0.0.1:$TP/text/a" || rc=$?
[ "$rc" != 0 ] || fail "curl over TLS 1.1 was served"
for v in 1.2 1.3; do
  curl -sf --cacert ca.pem "--tlsv$v" --tls-max "$v" -o /dev/null "https://127.0.0.1:$TP/text/a" ||
    fail "TLS $v refused"
done
echo "ok: TLS 1.1 refused, 1.2 and 1.3 served"

# --- Reload on SIGHUP: new handshakes, old connections go on -------------------------------
curl -sf "$ORIGIN/trickle/t" -o t.orig
# One connection: a slow download (3.2 s), then a second request on it.
curl -sf -v --http1.1 --cacert ca.pem --resolve "a.test:$TP:127.0.0.1" \
  "https://a.test:$TP/trickle/t" -o t1 "https://a.test:$TP/text/a" -o a1 2>keep.txt &
KEEP=$!
sleep 1
cp renewed.pem live.pem && cp renewed.key live.key
kill -HUP "$PID"
for _ in $(seq 1 50); do grep -q "certificates reloaded" sni.log && break; sleep 0.1; done
grep -q "certificates reloaded" sni.log || fail "no reload after SIGHUP: $(tail -3 sni.log)"
[ "$(subject a.test)" = renewed.test ] || fail "after the reload a.test got $(subject a.test)"
[ "$(subject b.test)" = b.test ] || fail "after the reload b.test got $(subject b.test)"
wait "$KEEP" || fail "the connection opened before the reload broke"
cmp -s t1 t.orig || fail "the download across the reload differs"
cmp -s a1 a.orig || fail "the request after the reload on the old connection differs"
grep -q "Re-using existing connection" keep.txt || fail "the second request did not reuse the connection"
[ "$(sed -n 's/^\*  subject: CN=\(.*\)$/\1/p' keep.txt | tr -d '\r')" = a.test ] ||
  fail "the old connection's certificate: $(grep subject: keep.txt)"
echo "ok: reload on SIGHUP, the open connection went on"

# --- A reload that cannot read its files keeps what it has ------------------------------
cp a.pem live.key  # a certificate where the key should be
before=$(grep -c "reload failed" sni.log || true)
kill -HUP "$PID"
for _ in $(seq 1 50); do [ "$(grep -c "reload failed" sni.log)" -gt "$before" ] && break; sleep 0.1; done
[ "$(grep -c "reload failed" sni.log)" = $((before + 1)) ] || fail "a failed reload logged: $(tail -3 sni.log)"
grep "reload failed" sni.log | grep -q "live.key" || fail "the failed reload does not name the file"
[ "$(subject a.test)" = renewed.test ] || fail "after a failed reload a.test got $(subject a.test)"
kill -0 "$PID" || fail "the server died on SIGHUP"
echo "ok: a failed reload keeps the certificates in use"

# --- Setup errors, one line each -------------------------------------------------------------
one_line_error() {  # one_line_error EXPECTED ARGS...
  local want=$1
  shift
  local rc=0
  "$FERRY" cache serve --origin "$ORIGIN" --dir "$TMP/ecache" --listen 127.0.0.1:0 "$@" 2>err >/dev/null || rc=$?
  [ "$rc" -ne 0 ] || fail "accepted: $*"
  [ "$(wc -l <err)" -eq 1 ] || fail "not one line: $(cat err)"
  grep -q -- "$want" err || fail "expected '$want': $(cat err)"
}
one_line_error "come in pairs" --tls-cert a.pem --tls-key a.key --tls-cert b.pem
one_line_error "needs --tls-cert" --listen-tls 127.0.0.1:0
one_line_error "TLS key b.key" --listen-tls 127.0.0.1:0 --tls-cert a.pem --tls-key b.key
one_line_error "TLS needs a TCP address" --listen-tls "unix:$TMP/x.sock" --tls-cert a.pem --tls-key a.key
echo "ok: setup errors"
