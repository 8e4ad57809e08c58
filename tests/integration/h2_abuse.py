#!/usr/bin/env python3
"""Misbehaving HTTP/2 clients for the cache's h2 tests, on loopback h2c.
Built on the python3-h2 state machine (and raw frames where h2 would not
misbehave). Each command prints one line of JSON with what the server did,
and exits non-zero when the server did not do what it must. A PATH ending
in "*" gets the request's number in place of the "*" (a new key each).

  h2_abuse.py PORT reset-flood PAIRS PATH [GAP_MS]
      HEADERS then RST_STREAM, PAIRS times as fast as it can (CVE-2023-44487):
      the server must answer with GOAWAY ENHANCE_YOUR_CALM and close. With
      GAP_MS, each 50 HEADERS go out GAP_MS before their 50 RST_STREAMs, so
      that the server has started their work when the resets come.
  h2_abuse.py PORT continuation-flood FRAMES
      HEADERS without END_HEADERS, then FRAMES CONTINUATION frames: GOAWAY
      (ENHANCE_YOUR_CALM) and close, or a close.
  h2_abuse.py PORT streams N PATH
      N requests sent before the server's SETTINGS are read: those past the
      server's limit must be refused (RST_STREAM REFUSED_STREAM), the rest served.
  h2_abuse.py PORT big-header BYTES
      a request whose header list is BYTES long: 431.
  h2_abuse.py PORT idle [PING_EVERY_S]
      a connection that opens no stream after its preface (sending a PING
      every PING_EVERY_S seconds if given): how long until the server
      closes it.
"""
import json
import socket
import struct
import sys
import time

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.settings
import hpack

ENHANCE_YOUR_CALM = 0xB
REFUSED_STREAM = 0x7


def connect(port, timeout=20):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(timeout)
    c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    c.initiate_connection()
    s.sendall(c.data_to_send())
    return s, c


def path_of(pattern, i):
    """PATTERN with a trailing "*" replaced by i (a new key each time), else as it is."""
    return pattern[:-1] + str(i) if pattern.endswith("*") else pattern


def request_headers(path):
    return [(":method", "GET"), (":path", path), (":scheme", "http"), (":authority", "cache.test")]


def read_events(s, c):
    """The events of the next read; None when the server closed."""
    try:
        data = s.recv(65536)
    except (ConnectionResetError, socket.timeout):
        return None
    if not data:
        return None
    try:
        events = c.receive_data(data)
    except h2.exceptions.ProtocolError:
        events = []
    try:
        s.sendall(c.data_to_send())
    except OSError:
        pass
    return events


def goaway_or_close(s, c, deadline=20):
    """Reads until a GOAWAY or the close: (goaway error code or None, closed)."""
    end = time.time() + deadline
    code = None
    while time.time() < end:
        events = read_events(s, c)
        if events is None:
            return code, True
        for e in events:
            if isinstance(e, h2.events.ConnectionTerminated):
                code = int(e.error_code)
    return code, False


def reset_flood(port, pairs, prefix, gap_ms):
    s, c = connect(port)
    sent = 0
    try:
        for batch in range(0, pairs, 50):
            ids = []
            for i in range(batch, min(pairs, batch + 50)):
                sid = c.get_next_available_stream_id()
                c.send_headers(sid, request_headers(path_of(prefix, i)), end_stream=True)
                ids.append(sid)
                if gap_ms == 0:
                    c.reset_stream(sid, error_code=h2.errors.ErrorCodes.CANCEL)
            if gap_ms > 0:
                s.sendall(c.data_to_send())
                time.sleep(gap_ms / 1000)
                for sid in ids:
                    c.reset_stream(sid, error_code=h2.errors.ErrorCodes.CANCEL)
            s.sendall(c.data_to_send())
            sent += len(ids)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server closed while we flooded: what it said is still to read
    code, closed = goaway_or_close(s, c)
    print(json.dumps({"sent": sent, "goaway": code, "closed": closed}))
    return code == ENHANCE_YOUR_CALM and closed


def frame(kind, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def continuation_flood(port, frames):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(20)
    s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(0x4, 0, 0, b""))
    block = hpack.Encoder().encode(request_headers("/text/a"))
    field = hpack.Encoder().encode([("x-flood", "b" * 16)])
    sent = 0
    try:
        s.sendall(frame(0x1, 0x1, 1, block))  # END_STREAM, not END_HEADERS
        chunk = frame(0x9, 0, 1, field) * 1000
        while sent < frames:
            s.sendall(chunk)
            sent += 1000
    except (BrokenPipeError, ConnectionResetError):
        pass
    # Read frames until the close; note a GOAWAY's error code.
    data, code = b"", None
    try:
        while True:
            more = s.recv(65536)
            if not more:
                break
            data += more
    except (ConnectionResetError, socket.timeout):
        pass
    at = 0
    while at + 9 <= len(data):
        n = int.from_bytes(data[at:at + 3], "big")
        if data[at + 3] == 0x7 and at + 9 + 8 <= len(data):
            code = int.from_bytes(data[at + 13:at + 17], "big")
        at += 9 + n
    print(json.dumps({"sent_frames": sent, "goaway": code}))
    return code == ENHANCE_YOUR_CALM


def streams(port, n, prefix):
    s, c = connect(port)
    # Our SETTINGS are unacknowledged and theirs unread: h2 lets us open many.
    ids = []
    for i in range(n):
        sid = c.get_next_available_stream_id()
        c.send_headers(sid, request_headers(path_of(prefix, i)), end_stream=True)
        ids.append(sid)
    s.sendall(c.data_to_send())
    status, refused, other_reset, done = {}, 0, 0, set()
    while len(done) < n:
        events = read_events(s, c)
        if events is None:
            break
        for e in events:
            if isinstance(e, h2.events.ResponseReceived):
                status[e.stream_id] = dict(e.headers)[":status"]
            elif isinstance(e, h2.events.DataReceived):
                c.acknowledge_received_data(e.flow_controlled_length, e.stream_id)
            elif isinstance(e, h2.events.StreamEnded):
                done.add(e.stream_id)
            elif isinstance(e, h2.events.StreamReset):
                done.add(e.stream_id)
                if e.error_code == REFUSED_STREAM:
                    refused += 1
                else:
                    other_reset += 1
        s.sendall(c.data_to_send())
    ok = sum(1 for v in status.values() if v == "200")
    print(json.dumps({"ok": ok, "refused": refused, "other_reset": other_reset, "ended": len(done)}))
    return True


def big_header(port, size):
    s, c = connect(port)
    c.send_headers(1, request_headers("/text/a") + [("x-big", "a" * size)], end_stream=True)
    s.sendall(c.data_to_send())
    status = None
    while status is None:
        events = read_events(s, c)
        if events is None:
            break
        for e in events:
            if isinstance(e, h2.events.ResponseReceived):
                status = dict(e.headers)[":status"]
    print(json.dumps({"status": status}))
    return status == "431"


def idle(port, ping_every):
    s, c = connect(port, timeout=0.1)
    start = time.time()
    next_ping = start + ping_every if ping_every else None
    closed_after = None
    while time.time() - start < 60:
        try:
            data = s.recv(65536)
        except socket.timeout:
            data = None
        except ConnectionResetError:
            data = b""
        if data == b"":
            closed_after = time.time() - start
            break
        if data:
            c.receive_data(data)
        if next_ping and time.time() >= next_ping:
            c.ping(b"ferry-pg")
            next_ping += ping_every
        try:
            s.sendall(c.data_to_send())
        except OSError:
            closed_after = time.time() - start
            break
    print(json.dumps({"closed_after_s": round(closed_after, 2) if closed_after else None}))
    return closed_after is not None


def main():
    port, cmd, args = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    if cmd == "reset-flood":
        ok = reset_flood(port, int(args[0]), args[1], int(args[2]) if len(args) > 2 else 0)
    elif cmd == "continuation-flood":
        ok = continuation_flood(port, int(args[0]))
    elif cmd == "streams":
        ok = streams(port, int(args[0]), args[1])
    elif cmd == "big-header":
        ok = big_header(port, int(args[0]))
    elif cmd == "idle":
        ok = idle(port, float(args[0]) if args else 0)
    else:
        sys.exit("unknown command " + cmd)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
