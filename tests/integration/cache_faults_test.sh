#!/usr/bin/env bash
# ferry cache serve under faults (issue 4, "Bad input and faults"), against
# the scripted origin (cache_origin.py), with curl and raw Python sockets as
# clients:
# - an origin that sends fewer bytes than it announced (Content-Length, a
#   chunked body with no last chunk, half a header block), or resets the
#   connection before or in the middle of an answer: the client gets a 502
#   (or a cut connection), never a short 200; nothing is cached;
# - an origin that does not answer within --origin-timeout: a 504 in about
#   that time while other requests go on; nothing is cached;
# - clients that disconnect mid-body or before reading the answer: nothing
#   half-received goes upstream and the server keeps serving;
# - slow clients under --client-timeout: a request that never completes (sent
#   in part, or trickled) and a reader that stops reading are cut within a few
#   seconds; a slow but steady reader gets every byte; other clients are
#   served at full speed meanwhile;
# - a full disk (a 1 MiB tmpfs as --dir): every answer still 200 with the
#   origin's bytes, store failures counted, no temporary files left behind;
# - malformed request lines and headers: 400 (or a closed connection), never
#   a request that reaches the origin, and the server keeps serving; a header
#   just under the size limit still works (the oversized one and a corrupt
#   entry on disk are in cache_test.sh).
source "$(dirname "$0")/lib.sh"
need curl
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 not installed"
source "$FERRY_SOURCE/tests/integration/cache_lib.sh"

# The full-disk scenario mounts a tmpfs inside $TMP: unmount it (after its
# cache is stopped) before lib.sh's cleanup removes $TMP.
FULL_MNT="" FULL_PID=""
cleanup_faults() {
  if [ -n "$FULL_MNT" ] && grep -qs " $FULL_MNT " /proc/mounts; then
    if [ -n "$FULL_PID" ]; then kill "$FULL_PID" 2>/dev/null || true; wait "$FULL_PID" 2>/dev/null || true; fi
    umount "$FULL_MNT" 2>/dev/null || umount -l "$FULL_MNT" 2>/dev/null || true
  fi
  cleanup
}
trap cleanup_faults EXIT

start_origin
start_cache_named faults --origin "$ORIGIN" --dir "$TMP/cache" --origin-timeout 1s --client-timeout 1s
PORT=$(cat "$TMP/faults.port")
FAULTS_C=$C FAULTS_PID=$CACHE_PID

m() { metric "$C" "$1"; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# still_serving WHAT: the cache process is alive and answers a new request
# (a miss: it goes to the origin) with the origin's bytes.
SERVING=0
still_serving() {
  kill -0 "$CACHE_PID" 2>/dev/null || { tail -20 "$TMP/faults.log" >&2; fail "$1: ferry exited"; }
  SERVING=$((SERVING + 1))
  local path=/text/alive-$SERVING
  curl -sf --max-time 5 "$C$path" -o "$TMP/alive" || fail "$1: the cache no longer answers"
  curl -sf "$ORIGIN$path" | cmp -s - "$TMP/alive" || fail "$1: wrong bytes afterwards"
}

# A small raw HTTP client for what curl will not send.
cat >"$TMP/raw.py" <<'PY'
import socket, time

def connect(port, rcvbuf=None):
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", port))
    return s

def read_head(s):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(1)
        if not chunk:
            break
        data += chunk
    return data

def drain(s, timeout, step=65536, delay=0.0):
    """Reads until EOF; returns (bytes, 'eof' | 'reset' | 'open')."""
    s.settimeout(timeout)
    out = bytearray()
    try:
        while True:
            chunk = s.recv(step)
            if not chunk:
                return bytes(out), "eof"
            out += chunk
            if delay:
                time.sleep(delay)
    except ConnectionResetError:
        return bytes(out), "reset"
    except socket.timeout:
        return bytes(out), "open"

def wait_closed(s, timeout):
    """Seconds until the peer closes (EOF or reset), or None."""
    t = time.monotonic()
    _, end = drain(s, timeout)
    return None if end == "open" else time.monotonic() - t
PY
export PYTHONPATH="$TMP"

# --- the origin sends less than it announced, or resets --------------------
# /cut: Content-Length 100000, 1000 bytes, FIN. /cut-chunked: three chunks, FIN.
# /cut-head: half a header block, FIN. /rst-mid: 1000 of 100000 bytes, RST.
# /reset: FIN before any answer. /rst: RST before any answer.
# Each is asked twice (the second time by a zstd client): both reach the origin.
entries0=$(m ferry_cache_disk_entries)
memory0=$(m ferry_cache_memory_entries)
errors0=$(m ferry_cache_errors_total)
answered_502=0
for path in /cut /cut-chunked /cut-head /rst-mid /reset /rst; do
  for try in 1 2; do
    enc=identity; [ $try = 2 ] && enc=zstd
    rc=0
    code=$(curl -s --max-time 10 -H "Accept-Encoding: $enc" -D "$TMP/h" -o "$TMP/body" -w '%{http_code}' "$C$path") || rc=$?
    if [ $rc = 0 ]; then
      [ "$code" = 502 ] || fail "$path ($enc): answered $code with $(stat -c %s "$TMP/body") bytes, not a 502"
      answered_502=$((answered_502 + 1))
    else
      # A cut connection is the other honest answer; curl: 18 partial file,
      # 52 empty reply, 56 receive failure.
      case $rc in 18|52|56) echo "$path ($enc): connection cut (curl exit $rc), status $code" ;;
        *) fail "$path ($enc): curl exit $rc" ;;
      esac
    fi
    [ "$(header "$TMP/h" x-cache)" != HIT ] || fail "$path ($enc): a broken answer was served from the cache"
  done
  [ "$(origin_count "$path")" = 2 ] || fail "$path: origin saw $(origin_count "$path") requests for 2 (cached?)"
done
[ "$(m ferry_cache_disk_entries)" = "$entries0" ] || fail "disk entries $entries0 -> $(m ferry_cache_disk_entries)"
[ "$(m ferry_cache_memory_entries)" = "$memory0" ] || fail "memory entries $memory0 -> $(m ferry_cache_memory_entries)"
errors=$(( $(m ferry_cache_errors_total) - errors0 ))
[ $errors -ge $answered_502 ] && [ $errors -le 12 ] || fail "errors_total moved by $errors for $answered_502 answers 502"
still_serving "a short or reset origin"

# --- the origin does not answer within --origin-timeout 1s -----------------------
# One request waits on /hang while another one (a miss) is answered at once.
curl -sf "$ORIGIN/text/during-hang" -o "$TMP/during.orig"
start=$(now_ms)
curl -s --max-time 10 -D "$TMP/hh" -o /dev/null -w '%{http_code}' "$C/hang" >"$TMP/hang.code" &
hang_pid=$!
sleep 0.2
t0=$(now_ms)
curl -sf --max-time 5 "$C/text/during-hang" -o "$TMP/during"
during=$(( $(now_ms) - t0 ))
entries0=$(m ferry_cache_disk_entries)  # with /text/during-hang
cmp -s "$TMP/during.orig" "$TMP/during" || fail "a request during a hung fill: wrong bytes"
[ $during -lt 900 ] || fail "a request during a hung fill took $during ms"
wait $hang_pid || true
elapsed=$(( $(now_ms) - start ))
code=$(cat "$TMP/hang.code")
echo "/hang: $code after $elapsed ms (another request meanwhile: $during ms)"
[ "$code" = 504 ] || fail "/hang: $code, not 504"
[ $elapsed -ge 800 ] && [ $elapsed -lt 3000 ] || fail "/hang: answered after $elapsed ms (--origin-timeout 1s)"
start=$(now_ms)
code=$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$C/hang")
elapsed=$(( $(now_ms) - start ))
[ "$code" = 504 ] && [ $elapsed -lt 3000 ] || fail "/hang again: $code after $elapsed ms"
[ "$(origin_count /hang)" = 2 ] || fail "/hang: origin saw $(origin_count /hang) requests, not 2"
[ "$(m ferry_cache_disk_entries)" = "$entries0" ] || fail "/hang: an entry was stored"
still_serving "an origin timeout"

# --- clients that go away ------------------------------------------------------------
# A POST announcing 100000 bytes that sends 10 and closes; GETs closed right
# after sending (a slow fill, and an 8 MB answer written to a closed socket);
# a GET closed after reading part of the answer.
echo0=$(origin_count /echo)
/usr/bin/python3 - "$PORT" <<'PY' || fail "clients that go away"
import sys, time
from raw import connect, read_head
port = int(sys.argv[1])
s = connect(port)
s.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n0123456789")
s.close()
for path in (b"/slow/gone", b"/big/gone"):
    s = connect(port)
    s.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    s.close()
s = connect(port, rcvbuf=8192)
s.sendall(b"GET /big/half HTTP/1.1\r\nHost: x\r\n\r\n")
assert read_head(s).startswith(b"HTTP/1.1 200"), "GET /big/half"
s.recv(4096)
s.close()  # with unread bytes: an RST
time.sleep(1.0)  # the fills finish, the writes fail
PY
[ "$(origin_count /echo)" = "$echo0" ] || fail "a POST cut mid-body reached the origin"
make_file "$TMP/post" 100000
curl -sf --max-time 5 --data-binary @"$TMP/post" -H 'Content-Type: application/octet-stream' "$C/echo" -o "$TMP/echoed" \
  || fail "a whole POST after a cut one"
same_bytes "$TMP/post" "$TMP/echoed"
for path in /slow/gone /big/gone /big/half; do
  curl -sf --max-time 5 "$C$path" -o "$TMP/after" || fail "$path after its first client left: no answer"
  curl -sf "$ORIGIN$path" | cmp -s - "$TMP/after" || fail "$path after its first client left: wrong bytes"
done
still_serving "clients that go away"

# --- slow clients, --client-timeout 1s -------------------------------------------------
# At once: 20 connections that send part of a request line and stall; one that
# trickles a request a byte every 0.2 s (it would need 6 s); a POST that stalls
# mid-body; a reader that stops reading an 8 MB answer for 3 s; a reader that
# takes 3 s over a 300 KB one. Meanwhile other clients get their answers fast.
curl -sf "$ORIGIN/big/stall" -o "$TMP/big.orig"
curl -sf "$ORIGIN/blob/slow" -o "$TMP/blob.orig"
for i in 1 2 3 4 5; do curl -sf "$ORIGIN/text/other$i" -o "$TMP/other$i.orig"; done
stall0=$(origin_count /echo)
start=$(now_ms)
/usr/bin/python3 - "$PORT" "$TMP" <<'PY' || fail "slow clients"
import http.client, sys, threading, time
from raw import connect, read_head, drain, wait_closed
port, tmp = int(sys.argv[1]), sys.argv[2]
results, problems = {}, []

def slowloris(i):
    s = connect(port)
    s.sendall(b"GET /text/a HT")
    results["slowloris%d" % i] = wait_closed(s, 6)

def trickle():
    s = connect(port)
    t = time.monotonic()
    try:
        for b in b"GET /text/a HTTP/1.1\r\nHost: x\r\n":
            s.sendall(bytes([b]))
            time.sleep(0.2)
        s.settimeout(6)
        s.recv(1)
    except OSError:
        pass
    results["trickle"] = time.monotonic() - t

def stalled_post():
    s = connect(port)
    s.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n0123456789")
    results["stalled_post"] = wait_closed(s, 6)

def stalled_reader():
    s = connect(port, rcvbuf=8192)
    s.sendall(b"GET /big/stall HTTP/1.1\r\nHost: x\r\n\r\n")
    head = read_head(s)
    time.sleep(3)
    body, end = drain(s, 6)
    results["stalled_reader"] = (head.split(b"\r\n")[0], len(body), end, body)

def slow_reader():
    s = connect(port, rcvbuf=8192)
    s.sendall(b"GET /blob/slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    head = read_head(s)
    t = time.monotonic()
    body, end = drain(s, 6, step=1024, delay=0.01)
    results["slow_reader"] = (head.split(b"\r\n")[0], body, end, time.monotonic() - t)

threads = [threading.Thread(target=slowloris, args=(i,)) for i in range(20)]
threads += [threading.Thread(target=f) for f in (trickle, stalled_post, stalled_reader, slow_reader)]
for t in threads:
    t.start()
time.sleep(0.3)
worst = 0.0
for rnd in range(3):  # a miss, then hits
    for i in range(1, 6):
        t = time.monotonic()
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        c.request("GET", "/text/other%d" % i)
        r = c.getresponse()
        body = r.read()
        c.close()
        took = time.monotonic() - t
        worst = max(worst, took)
        if r.status != 200 or body != open("%s/other%d.orig" % (tmp, i), "rb").read():
            problems.append("other client: /text/other%d: %d, %d bytes" % (i, r.status, len(body)))
        if took > 0.5:
            problems.append("other client: /text/other%d took %.2f s" % (i, took))
    time.sleep(0.3)
for t in threads:
    t.join()

for i in range(20):
    w = results["slowloris%d" % i]
    if w is None or not 0.8 <= w <= 3.5:
        problems.append("partial request line %d: closed after %s s, not in 0.8-3.5 s" % (i, w))
if not results["trickle"] < 3.5:
    problems.append("trickled request: still open after %.2f s" % results["trickle"])
w = results["stalled_post"]
if w is None or not 0.8 <= w <= 3.5:
    problems.append("POST stalled mid-body: closed after %s s" % w)
status, n, end, body = results["stalled_reader"]
big = open(tmp + "/big.orig", "rb").read()
# 8 MB is more than the kernel buffers (tcp_wmem at most 4 MB by default): the
# server has to wait for the reader, and gives up. With larger buffers the
# answer may fit, and being cut is not required.
with open("/proc/sys/net/ipv4/tcp_wmem") as f:
    must_cut = int(f.read().split()[2]) <= 6_000_000
if status != b"HTTP/1.1 200 OK" or (n >= len(big) and must_cut) or end == "open" or body != big[:n]:
    problems.append("reader stalled 3 s on 8 MB: %s, %d bytes, %s (expected: cut short, a prefix)" % (status, n, end))
status, body, end, took = results["slow_reader"]
if status != b"HTTP/1.1 200 OK" or body != open(tmp + "/blob.orig", "rb").read() or end != "eof":
    problems.append("slow reader of 300 KB: %s, %d bytes, %s after %.1f s" % (status, len(body), end, took))
print("slow clients: partial request lines closed after %.2f-%.2f s, trickle after %.2f s, stalled POST after %.2f s;"
      % (min(results["slowloris%d" % i] or 99 for i in range(20)), max(results["slowloris%d" % i] or 99 for i in range(20)),
         results["trickle"], results["stalled_post"] or 99))
print("  stalled reader got %d of %d bytes (%s); slow reader got %d bytes in %.1f s; others: worst %.3f s"
      % (results["stalled_reader"][1], len(big), results["stalled_reader"][2], len(results["slow_reader"][1]),
         results["slow_reader"][3], worst))
for p in problems:
    print("FAIL: " + p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
echo "slow clients: $(( $(now_ms) - start )) ms"
[ "$(origin_count /echo)" = "$stall0" ] || fail "a POST stalled mid-body reached the origin"
still_serving "slow clients"

# --- a full disk: a 1 MiB tmpfs as the cache directory ----------------------------------
FULL_MNT="$TMP/full"
mkdir -p "$FULL_MNT"
if ! mount -t tmpfs -o size=1m tmpfs "$FULL_MNT" 2>"$TMP/mount.err"; then
  echo "full disk: skipped, cannot mount a tmpfs ($(head -1 "$TMP/mount.err"))"
  FULL_MNT=""
else
  start_cache_named full --origin "$ORIGIN" --dir "$FULL_MNT" --max-size 100M --memory-size 0
  FULL_PID=$CACHE_PID
  hits=0
  for pass in 1 2; do
    for n in 1 2 3 4 5 6; do  # 6 x 300 KB into 1 MiB
      [ $pass = 1 ] && curl -sf "$ORIGIN/blob/full$n" -o "$TMP/full$n.orig"
      code=$(curl -s --max-time 5 -D "$TMP/hf" -o "$TMP/full$n" -w '%{http_code}' "$C/blob/full$n") || true
      [ "$code" = 200 ] || fail "full disk: /blob/full$n (pass $pass): $code"
      cmp -s "$TMP/full$n.orig" "$TMP/full$n" || fail "full disk: /blob/full$n (pass $pass): wrong bytes"
      [ "$(header "$TMP/hf" x-cache)" = HIT ] && hits=$((hits + 1))
    done
  done
  kill -0 "$FULL_PID" 2>/dev/null || fail "full disk: ferry exited"
  failures=$(m ferry_cache_store_failures_total)
  entries=$(m ferry_cache_disk_entries)
  # Records that failed to append were cut off again: the segment holds
  # the entries counted and nothing else.
  seg=$(find "$FULL_MNT/segments" -type f -printf '%s\n' | awk '{ n += $1 } END { print n }')
  live=$(m ferry_cache_disk_bytes)
  leftovers=$(find "$FULL_MNT" -type f ! -path "$FULL_MNT/segments/*" | wc -l)
  fetched=0; for n in 1 2 3 4 5 6; do fetched=$((fetched + $(origin_count /blob/full$n) - 1)); done
  echo "full disk: $entries entries kept ($live bytes in $seg of segments), $failures store failures, $hits hits, $fetched origin fetches"
  [ "$failures" -gt 0 ] || fail "full disk: no store failure counted"
  [ "$entries" -ge 1 ] && [ "$entries" -le 3 ] || fail "full disk: $entries entries counted"
  [ "$seg" = $((live + 32)) ] || fail "full disk: segments of $seg bytes for $live bytes of $entries records"
  [ "$leftovers" = 0 ] || fail "full disk: $leftovers temporary files left: $(find "$FULL_MNT" -type f ! -path "$FULL_MNT/segments/*")"
  [ "$hits" = "$entries" ] || fail "full disk: $hits hits in the second pass for $entries entries kept"
  [ "$fetched" = $((12 - hits)) ] || fail "full disk: $fetched origin fetches for 12 requests and $hits hits"
  curl -sf --max-time 5 "$C/text/a" -o "$TMP/full.text" || fail "full disk: the cache no longer answers"
  curl -sf "$ORIGIN/text/a" | cmp -s - "$TMP/full.text" || fail "full disk: wrong bytes for a compressible body"
  kill "$FULL_PID"; wait "$FULL_PID" 2>/dev/null || true
  umount "$FULL_MNT" || fail "full disk: umount"
  FULL_MNT="" FULL_PID=""
fi
C=$FAULTS_C CACHE_PID=$FAULTS_PID

# --- malformed request lines and headers ------------------------------------------------
# Each on its own connection: 400 (505 for a version ferry does not speak) and
# the connection closed, or the connection closed with no answer; then a good
# request. None of them may reach the origin (the marker path /smuggled is
# in the body of the Transfer-Encoding one).
curl -sf --max-time 5 -H "X-Pad: $(head -c 15000 /dev/zero | tr '\0' a)" "$C/text/a" -o "$TMP/padded" \
  || fail "a 15000-byte header (under the 16 KiB limit) was refused"
curl -sf "$ORIGIN/text/a" | cmp -s - "$TMP/padded" || fail "a 15000-byte header: wrong bytes"
/usr/bin/python3 - "$PORT" "$ORIGIN" <<'PY' || fail "malformed requests (see above)"
import json, sys, time, http.client, urllib.request
from raw import connect, drain
port, origin = int(sys.argv[1]), sys.argv[2]
H = b"Host: x\r\n"
cases = [
    ("TLS ClientHello", b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03" + bytes(32)),
    ("garbage line", b"HELLO THERE\r\n\r\n"),
    ("version HTTP/1.x", b"GET /text/a HTTP/1.x\r\n" + H + b"\r\n"),
    ("version HTTP/11", b"GET /text/a HTTP/11\r\n" + H + b"\r\n"),
    ("version HTTX/1.1", b"GET /text/a HTTX/1.1\r\n" + H + b"\r\n"),
    ("version HTTP/2.0", b"GET /text/a HTTP/2.0\r\n" + H + b"\r\n"),
    ("no version", b"GET /text/a\r\n" + H + b"\r\n"),
    ("spaces in the target", b"GET /text/a b c HTTP/1.1\r\n" + H + b"\r\n"),
    ("control byte in the target", b"GET /text/\x01a HTTP/1.1\r\n" + H + b"\r\n"),
    ("bad method token", b"G(T /text/a HTTP/1.1\r\n" + H + b"\r\n"),
    ("header without a colon", b"GET /text/a HTTP/1.1\r\n" + H + b"NoColonHere\r\n\r\n"),
    ("NUL in a header value", b"GET /text/a HTTP/1.1\r\n" + H + b"X-A: a\x00b\r\n\r\n"),
    ("NUL in a header name", b"GET /text/a HTTP/1.1\r\n" + H + b"X-\x00A: b\r\n\r\n"),
    ("space before the colon", b"GET /text/a HTTP/1.1\r\n" + H + b"X-A : b\r\n\r\n"),
    ("two different Content-Lengths", b"POST /echo HTTP/1.1\r\n" + H + b"Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"),
    ("Content-Length -1", b"POST /echo HTTP/1.1\r\n" + H + b"Content-Length: -1\r\n\r\n"),
    ("Content-Length 12abc", b"POST /echo HTTP/1.1\r\n" + H + b"Content-Length: 12abc\r\n\r\n"),
    ("bad chunk size", b"POST /echo HTTP/1.1\r\n" + H + b"Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"),
    # RFC 9112 6.3: chunked not the final coding of a request: 400, then close.
    ("Transfer-Encoding: gzip", b"POST /echo HTTP/1.1\r\n" + H + b"Transfer-Encoding: gzip\r\n\r\n"
                               b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"),
    # RFC 9112 3.2: no Host, more than one, or an invalid one: 400.
    ("HTTP/1.1 without Host", b"GET /text/a HTTP/1.1\r\n\r\n"),
    ("two Host fields", b"GET /text/a HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
    ("Host with a space", b"GET /text/a HTTP/1.1\r\nHost: a b\r\n\r\n"),
]
def origin_counts():
    return json.load(urllib.request.urlopen(origin + "/_stats"))["counts"]
echo0 = origin_counts().get("/echo", 0)
bad = []
for name, data in cases:
    s = connect(port)
    s.sendall(data)
    reply, end = drain(s, 0.8)  # under --client-timeout: the server closes, not the timeout
    s.close()
    first = reply.split(b"\r\n")[0].decode("latin-1")
    if reply == b"" and end != "open":
        outcome = "closed"
    elif first.startswith(("HTTP/1.1 400 ", "HTTP/1.1 505 ")) and end != "open":
        outcome = first.split(" ")[1]
    else:
        outcome = "%r, connection %s" % (first, "left open" if end == "open" else "closed")
        bad.append("%s: %s" % (name, outcome))
    print("  %-32s %s" % (name, outcome))
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    c.request("GET", "/text/a")
    r = c.getresponse()
    if r.status != 200 or len(r.read()) != 200000:
        bad.append("after %s: a good request got %d" % (name, r.status))
    c.close()
counts = origin_counts()
if counts.get("/echo", 0) != echo0:
    bad.append("malformed POSTs reached the origin (%d)" % (counts.get("/echo", 0) - echo0))
smuggled = counts.get("/smuggled", 0)
if smuggled:
    bad.append("the body of a request reached the origin as a request of its own (/smuggled: %d)" % smuggled)
for b in bad:
    print("FAIL: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
still_serving "malformed requests"

echo "cache_faults_test: ok"
