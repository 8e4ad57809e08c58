#!/usr/bin/env python3
"""Abusive clients for the server-limit tests (server_limits_test.sh). Each
mode attacks one server while a well-behaved client probes it every
0.2 s, and prints one JSON line: what the attack did, what the server did
to it, and how the probes fared.

  abuse.py idle PORT COUNT HOLD PROBE_URL
      COUNT connections that never send a byte, opened as fast as the
      server accepts them (see connect_many), then held HOLD seconds
      (longer, up to 30 s more, until three probes have been made).
  abuse.py slowloris PORT COUNT DURATION PROBE_URL
      COUNT connections that send a request's head one header line per
      second and never finish it.
  abuse.py flood PORT CONNS REQUESTS PATH PROBE_URL
      CONNS connections each pipelining REQUESTS GETs of PATH as fast as
      the server takes them, reading every answer.
  abuse.py nbd-idle PORT COUNT HOLD
      COUNT NBD connections that read the greeting and say nothing more.

Probes: GET PROBE_URL with a 5 s timeout; the summary has how many were
answered 200 and the slowest. Loopback only."""
import json
import select
import socket
import sys
import threading
import time
import urllib.request


def probe_loop(url, stop, out):
    while not stop.is_set():
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                r.read()
                ok = r.status == 200
        except Exception:
            ok = False
        ms = (time.monotonic() - t0) * 1000
        out["probes"] += 1
        out["probes_ok"] += 1 if ok else 0
        out["probe_max_ms"] = max(out["probe_max_ms"], round(ms, 1))
        stop.wait(0.2)


def start_probes(url):
    out = {"probes": 0, "probes_ok": 0, "probe_max_ms": 0.0}
    stop = threading.Event()
    t = threading.Thread(target=probe_loop, args=(url, stop, out), daemon=True)
    t.start()
    return out, stop, t


def accept_queue(port):
    """The listener on `port`'s accept queue: connections the kernel has
    completed and the server not yet taken (/proc/net/tcp's rx_queue for a
    LISTEN socket), or None if there is no such listener."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:
                return int(f[4].split(":")[1], 16)
    return None


def connect_many(port, count, batch=500, queue_cap=1000):
    """COUNT non-blocking connects, `batch` at a time, each batch started
    only when the listener's accept queue is under `queue_cap`. Fired all at
    once, 10,000 connects arrive in about 50 ms: past the kernel's cap on a
    listen queue (somaxconn, 4,096) every SYN is dropped whatever the server
    does, and the clients (a probe among them) retry 1 s and 3 s later. The
    crowd arrives as fast as the server takes it; how long it took is
    returned with the sockets."""
    socks = []
    start = time.monotonic()
    while len(socks) < count:
        deadline = time.monotonic() + 10
        while (accept_queue(port) or 0) >= queue_cap and time.monotonic() < deadline:
            time.sleep(0.005)
        for _ in range(min(batch, count - len(socks))):
            s = socket.socket()
            s.setblocking(False)
            try:
                s.connect(("127.0.0.1", port))
            except BlockingIOError:
                pass
            socks.append(s)
    return socks, round(time.monotonic() - start, 2)


def readable(s):
    """Whether `s` has data or an end to read now (poll: fds past 1024 too)."""
    p = select.poll()
    p.register(s, select.POLLIN | select.POLLHUP | select.POLLERR)
    return bool(p.poll(0))


def closed_by_server(socks):
    """How many of `socks` the server has closed (EOF or reset)."""
    n = 0
    for s in socks:
        try:
            if readable(s):
                data = s.recv(65536)
                if not data:
                    n += 1
        except (ConnectionResetError, BrokenPipeError, OSError):
            n += 1
    return n


def idle(port, count, hold, url):
    socks, arrival_s = connect_many(port, count)
    out, stop, t = start_probes(url)
    # HOLD seconds, and at least three probes: a server still accepting the
    # crowd (slow under a sanitizer) answers the first probes late.
    start = time.monotonic()
    while time.monotonic() - start < hold or (out["probes"] < 3 and time.monotonic() - start < hold + 30):
        time.sleep(0.1)
    stop.set()
    t.join()
    out.update({"mode": "idle", "connections": count, "arrival_s": arrival_s,
                "closed_by_server": closed_by_server(socks)})
    for s in socks:
        s.close()
    return out


def slowloris(port, count, duration, url):
    socks = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET / HTTP/1.1\r\nHost: slow\r\n")
        socks.append(s)
    out, stop, t = start_probes(url)
    start = time.monotonic()
    closed_at = {}
    while time.monotonic() - start < duration and len(closed_at) < count:
        for i, s in enumerate(socks):
            if i in closed_at:
                continue
            try:
                s.sendall(b"X-Slow-%d: a\r\n" % int(time.monotonic()))
                if readable(s) and not s.recv(65536):
                    raise ConnectionResetError
            except (ConnectionResetError, BrokenPipeError, OSError):
                closed_at[i] = round(time.monotonic() - start, 1)
        time.sleep(1)
    stop.set()
    t.join()
    out.update({"mode": "slowloris", "connections": count, "closed_by_server": len(closed_at),
                "last_closed_s": max(closed_at.values()) if closed_at else None})
    for s in socks:
        s.close()
    return out


def flood(port, conns, requests, path, url):
    out, stop, t = start_probes(url)
    answered = [0] * conns
    req = ("GET %s HTTP/1.1\r\nHost: flood\r\n\r\n" % path).encode()

    def one(i):
        s = socket.create_connection(("127.0.0.1", port))
        s.settimeout(30)
        sent, buf = 0, b""
        try:
            while answered[i] < requests:
                if sent < requests and sent - answered[i] < 64:
                    s.sendall(req * 16)
                    sent += 16
                data = s.recv(1 << 20)
                if not data:
                    break
                buf += data
                answered[i] += buf.count(b"HTTP/1.1 ")
                buf = buf[buf.rfind(b"HTTP/1.1 ") + 1:] if b"HTTP/1.1 " in buf else buf[-16:]
        except OSError:
            pass
        s.close()

    start = time.monotonic()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(conns)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    stop.set()
    t.join()
    seconds = time.monotonic() - start
    out.update({"mode": "flood", "connections": conns, "answered": sum(answered),
                "requests_per_s": round(sum(answered) / seconds)})
    return out


def nbd_idle(port, count, hold):
    socks = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port))
        socks.append(s)
    greeted = 0
    for s in socks:
        s.settimeout(5)
        try:
            greeted += 1 if s.recv(18).startswith(b"NBDMAGIC") else 0
        except OSError:
            pass
    time.sleep(hold)
    out = {"mode": "nbd-idle", "connections": count, "greeted": greeted,
           "closed_by_server": closed_by_server(socks)}
    for s in socks:
        s.close()
    return out


def main():
    mode, port = sys.argv[1], int(sys.argv[2])
    a = sys.argv[3:]
    if mode == "idle":
        r = idle(port, int(a[0]), float(a[1]), a[2])
    elif mode == "slowloris":
        r = slowloris(port, int(a[0]), float(a[1]), a[2])
    elif mode == "flood":
        r = flood(port, int(a[0]), int(a[1]), a[2], a[3])
    elif mode == "nbd-idle":
        r = nbd_idle(port, int(a[0]), float(a[1]))
    else:
        sys.exit("abuse.py: unknown mode " + mode)
    print(json.dumps(r))


if __name__ == "__main__":
    main()
