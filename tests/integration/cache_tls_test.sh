#!/usr/bin/env bash
# The server core under the cache, seen by clients we did not write: HTTPS
# with a certificate curl verifies (zstd and keep-alive over TLS), a plain
# HTTP client on the TLS port refused without harm, a Unix-domain listener
# (curl --unix-socket), the connection limit (idle ones make room), a graceful stop on SIGTERM
# that finishes a slow answer in progress, and one-line setup errors.
source "$(dirname "$0")/lib.sh"
need curl
need openssl
source "$FERRY_SOURCE/tests/integration/cache_lib.sh"
start_origin

openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$TMP/key.pem" -out "$TMP/cert.pem" 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=other \
  -keyout "$TMP/other.key" -out "$TMP/other.pem" 2>/dev/null

# --- HTTPS: verified by curl, keep-alive, zstd over TLS ------------------------
start_cache_named tls --origin "$ORIGIN" --dir "$TMP/cache" --tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem"
S="https://127.0.0.1:$(cat "$TMP/tls.port")"
curl -sf "$ORIGIN/text/a" -o "$TMP/a.orig"
curl -sf --cacert "$TMP/cert.pem" -D "$TMP/h1" "$S/text/a" -o "$TMP/a1" || fail "HTTPS request"
cmp -s "$TMP/a.orig" "$TMP/a1" || fail "HTTPS body differs"
curl -sf --cacert "$TMP/cert.pem" -H 'Accept-Encoding: zstd' -D "$TMP/h2" "$S/text/a" -o "$TMP/a.zst"
[ "$(header "$TMP/h2" content-encoding)" = zstd ] || fail "no zstd over TLS"
[ "$(header "$TMP/h2" x-cache)" = HIT ] || fail "second HTTPS request: $(header "$TMP/h2" x-cache)"
zstd -dcq "$TMP/a.zst" | cmp -s - "$TMP/a.orig" || fail "zstd over TLS does not decode to the original"
# Two requests on one TLS connection.
curl -sf -v --cacert "$TMP/cert.pem" "$S/text/a" "$S/text/a" -o /dev/null -o /dev/null 2>"$TMP/v"
grep -qi "re-using existing connection" "$TMP/v" || fail "no keep-alive over TLS"
# Not trusted without the certificate; plain HTTP to the TLS port gets nothing.
if curl -s "$S/text/a" -o /dev/null; then fail "an untrusted certificate was accepted"; fi
if curl -s --max-time 5 "http://127.0.0.1:$(cat "$TMP/tls.port")/text/a" -o /dev/null; then
  fail "plain HTTP answered on the TLS port"
fi
curl -sf --cacert "$TMP/cert.pem" "$S/text/a" | cmp -s - "$TMP/a.orig" || fail "served after a plain client"
echo "ok: HTTPS"

# --- A Unix-domain socket ---------------------------------------------------------
"$FERRY" cache serve --origin "$ORIGIN" --dir "$TMP/ucache" --listen "unix:$TMP/cache.sock" \
  >>"$TMP/unix.log" 2>&1 &
UPID=$!
PIDS+=($UPID)
for _ in $(seq 1 50); do [ -S "$TMP/cache.sock" ] && break; sleep 0.1; done
curl -sf --unix-socket "$TMP/cache.sock" "http://localhost/text/a" -o "$TMP/u1" || fail "no answer on the socket"
cmp -s "$TMP/a.orig" "$TMP/u1" || fail "Unix-socket body differs"
kill -TERM "$UPID"
wait "$UPID" || fail "exit code $? after SIGTERM"
[ ! -e "$TMP/cache.sock" ] || fail "the socket file was left behind"
echo "ok: unix socket"

# --- The connection limit: a newcomer takes the oldest idle connection's place;
# with none idle, it is closed at once, and the busy ones are served ------------
start_cache_named limited --origin "$ORIGIN" --dir "$TMP/lcache" --max-connections 3
L=$C
/usr/bin/python3 - "$(cat "$TMP/limited.port")" <<'PY' || fail "connection limit"
import socket, sys, time
port = int(sys.argv[1])
# start_cache_named's probe (wait_port) was a connection too: the limit
# counts it until the server has seen it close.
time.sleep(1)
conn = lambda: socket.create_connection(("127.0.0.1", port))
held = [conn() for _ in range(3)]
time.sleep(0.3)
extra = conn()
for s in held + [extra]:
    s.settimeout(10)
assert held[0].recv(1) == b"", "the oldest idle connection was not closed to make room"
req = lambda path: ("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode()
def answer(s):
    """One whole answer (head and Content-Length body) read from `s`."""
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = s.recv(65536)
        assert chunk, "closed unanswered"
        got += chunk
    head, _, body = got.partition(b"\r\n\r\n")
    length = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
    while length and len(body) < length[0]:
        body += s.recv(65536)
    return head
extra.sendall(req("/text/a"))
assert answer(extra).startswith(b"HTTP/1.1 200"), "the newcomer was not served"
# Three busy connections (the origin's /hang answers after 5 s): one more finds
# nothing to take and is closed at once; the busy ones are answered.
busy = [held[1], held[2], extra]
for s in busy:
    s.sendall(req("/hang"))
time.sleep(0.5)
over = conn()
over.settimeout(5)
assert over.recv(1) == b"", "a connection over the limit was kept while all were busy"
for i, s in enumerate(busy):
    head = answer(s)
    assert head.startswith(b"HTTP/1.1 200"), "busy connection %d: %r" % (i, head[:60])
print("ok: the oldest idle connection made room; over the limit with all busy closed; busy ones served")
PY

# --- SIGTERM: an answer in progress is finished, then the process ends ----------------
start_cache_named drain --origin "$ORIGIN" --dir "$TMP/dcache"
D=$C
DPID=$CACHE_PID
curl -sf "$ORIGIN/trickle/t" -o "$TMP/t.orig" &
ORIG=$!
curl -sf "$D/trickle/t" -o "$TMP/t1" &
CURL=$!
sleep 0.8
kill -TERM "$DPID"
wait "$CURL" || fail "the answer in progress was cut by the stop"
wait "$ORIG"
cmp -s "$TMP/t.orig" "$TMP/t1" || fail "the drained answer differs"
wait "$DPID" || fail "exit code after SIGTERM"
echo "ok: graceful stop"

# --- Setup errors: one line each ------------------------------------------------------
one_line_error() {  # one_line_error EXPECTED ARGS...
  local want=$1
  shift
  local rc=0
  "$FERRY" cache serve --origin "$ORIGIN" --dir "$TMP/ecache" "$@" 2>"$TMP/err" >/dev/null || rc=$?
  [ "$rc" -ne 0 ] || fail "accepted: $*"
  [ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "not one line: $(cat "$TMP/err")"
  grep -q -- "$want" "$TMP/err" || fail "expected '$want': $(cat "$TMP/err")"
}
one_line_error "key values mismatch\|does not match the certificate" --listen 127.0.0.1:0 --tls-cert "$TMP/cert.pem" --tls-key "$TMP/other.key"
one_line_error "TLS certificate" --listen 127.0.0.1:0 --tls-cert "$TMP/missing.pem" --tls-key "$TMP/key.pem"
one_line_error "both a certificate and a key" --listen 127.0.0.1:0 --tls-cert "$TMP/cert.pem"
one_line_error "not an IP address" --listen example.com:80
one_line_error "address already in use\|Address already in use" --listen "127.0.0.1:$(cat "$TMP/limited.port")"
echo "ok: setup errors"
