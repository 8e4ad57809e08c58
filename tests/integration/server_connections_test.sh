#!/usr/bin/env bash
# The test server holds 1,000 concurrent keep-alive connections, answering a
# request on each twice, and its connection counter returns to idle after.
source "$(dirname "$0")/lib.sh"
ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" -ge 2100 ] || skip "open-file limit $(ulimit -n) is too low"
start_test_s3
/usr/bin/python3 - "$S3_PORT" <<'PY'
import json, selectors, socket, sys, time
port, n = int(sys.argv[1]), 1000
socks = []
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    socks.append(s)
req = b"GET /_admin/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
for rnd in range(2):
    for s in socks:
        s.sendall(req)
    for i, s in enumerate(socks):
        data = b""
        s.settimeout(10)
        while b"\r\n\r\n" not in data:
            chunk = s.recv(4096)
            assert chunk, f"connection {i} closed in round {rnd}"
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head[:40]
        length = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0])
        while len(body) < length:
            body += s.recv(4096)
stats = json.loads(__import__("urllib.request").request.urlopen(f"http://127.0.0.1:{port}/_admin/stats").read())
assert stats["connections"]["open"] >= n, stats["connections"]
for s in socks:
    s.close()
time.sleep(0.5)
stats = json.loads(__import__("urllib.request").request.urlopen(f"http://127.0.0.1:{port}/_admin/stats").read())
assert stats["connections"]["open"] <= 2, stats["connections"]
print(f"{n} concurrent connections, 2 requests each: ok")
PY
echo "server connections: ok"
