#!/usr/bin/env python3
"""A scripted HTTP origin for the cache tests (Python's http.server, loopback).

Paths:
  /text/NAME       text/html (~200 KB, varies by NAME), ETag, max-age=60
  /short/NAME      text/html, ETag, max-age=1, answers If-None-Match with 304
  /plain/NAME      text/html, ETag, no Cache-Control or Expires; 304 on If-None-Match
  /img.png         image/png (random bytes), max-age=60
  /pre.js          application/javascript, Content-Encoding: gzip, max-age=60
  /nostore         text/html, Cache-Control: no-store
  /slow/NAME       like /text/NAME, answered after 0.5 s
  /blob/NAME       application/octet-stream, 300 KB of random bytes, max-age=60
  /big/NAME        application/octet-stream, 8 MB of random bytes, max-age=60 (more than socket buffers hold)
  /trickle/NAME    text/html (send_head), 1 MB of random bytes sent 16 KB every 50 ms (3.2 s)
  /cut             text/html, Content-Length 100000 but 1000 bytes, then the connection closes
  /chunked/NAME    like /text/NAME, sent chunked (no Content-Length)
  /cut-chunked     text/html, chunked: three chunks, then the connection closes with no last chunk
  /cut-head        half a status line and header block, then the connection closes
  /reset           the connection closes before any answer
  /rst             the connection is reset (RST, SO_LINGER 0) before any answer
  /rst-mid         text/html, Content-Length 100000, 1000 bytes, then the connection is reset (RST)
  /hang            answers after 5 s
  /echo            POST: answers with the request body
  /_down           POST: every later GET answers 500 (/_up undoes it)
  /_stats          JSON: requests per path and the conditional ones
"""
import gzip, json, os, random, socket, struct, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
COUNTS, CONDITIONAL = {}, {}
DOWN = [False]


def text(name, n=200_000):
    r = random.Random(name)
    words = ["<p>", "cache", "origin", "zstd", "transcoding", "</p>\n", "the", "ferry", "<div>", "</div>"]
    out = []
    size = 0
    while size < n:
        w = r.choice(words) + " "
        out.append(w)
        size += len(w)
    return "".join(out)[:n].encode()


PNG = random.Random(7).randbytes(50_000)
PREGZ = gzip.compress(b"var x = 1;\n" * 5000)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def count(self):
        with LOCK:
            COUNTS[self.path] = COUNTS.get(self.path, 0) + 1
            if self.headers.get("If-None-Match") or self.headers.get("If-Modified-Since"):
                CONDITIONAL[self.path] = CONDITIONAL.get(self.path, 0) + 1

    def send(self, status, body, headers):
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_head(self, framing):
        """A 200 text/html head for a body the caller writes itself; `framing`
        gives its Content-Length or Transfer-Encoding."""
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Cache-Control", "max-age=60")
        for k, v in framing.items():
            self.send_header(k, v)
        self.end_headers()

    def abort(self):
        """Closes the connection with an RST (SO_LINGER 0) instead of a FIN."""
        self.close_connection = True
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.rfile.close()
        self.connection.close()

    def do_GET(self):
        self.count()
        p = self.path
        if p == "/_stats":
            with LOCK:
                body = json.dumps({"counts": COUNTS, "conditional": CONDITIONAL}).encode()
            return self.send(200, body, {"Content-Type": "application/json", "Cache-Control": "no-store"})
        if DOWN[0]:
            return self.send(500, b"down\n", {"Content-Type": "text/plain"})
        if p.startswith("/text/"):
            return self.send(200, text(p), {"Content-Type": "text/html; charset=utf-8", "ETag": '"t-%s"' % p[6:],
                                            "Cache-Control": "max-age=60"})
        if p.startswith("/short/"):
            etag = '"s-%s"' % p[7:]
            if self.headers.get("If-None-Match") == etag:
                return self.send(304, b"", {"ETag": etag, "Cache-Control": "max-age=1"})
            return self.send(200, text(p), {"Content-Type": "text/html", "ETag": etag, "Cache-Control": "max-age=1"})
        if p.startswith("/slow/"):
            time.sleep(0.5)
            return self.send(200, text(p), {"Content-Type": "text/html", "ETag": '"w-%s"' % p[6:],
                                            "Cache-Control": "max-age=60"})
        if p.startswith("/blob/"):
            return self.send(200, random.Random(p).randbytes(300_000),
                             {"Content-Type": "application/octet-stream", "Cache-Control": "max-age=60"})
        if p == "/cut":
            self.send_head({"Content-Length": "100000"})
            self.wfile.write(text(p, 1000))
            self.wfile.flush()
            self.close_connection = True
            return
        if p.startswith("/big/"):
            return self.send(200, random.Random(p).randbytes(8_000_000),
                             {"Content-Type": "application/octet-stream", "Cache-Control": "max-age=60"})
        if p.startswith("/trickle/"):
            body = random.Random(p).randbytes(1_000_000)
            self.send_head({"Content-Length": str(len(body))})
            for at in range(0, len(body), 16_000):
                self.wfile.write(body[at:at + 16_000])
                self.wfile.flush()
                time.sleep(0.05)
            return
        if p.startswith("/chunked/"):  # a whole chunked body, no Content-Length
            body = text(p)
            self.send_head({"Transfer-Encoding": "chunked"})
            for at in range(0, len(body), 7000):
                chunk = body[at:at + 7000]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\n\r\n")
            return
        if p == "/cut-chunked":
            self.send_head({"Transfer-Encoding": "chunked"})
            for i in range(3):
                chunk = text(p + str(i), 1000)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
            self.close_connection = True
            return
        if p == "/cut-head":
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/ht")
            self.wfile.flush()
            self.close_connection = True
            return
        if p == "/rst":
            return self.abort()
        if p == "/rst-mid":
            self.send_head({"Content-Length": "100000"})
            self.wfile.write(text(p, 1000))
            return self.abort()
        if p == "/reset":
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if p == "/hang":
            time.sleep(5)
            return self.send(200, b"late\n", {"Content-Type": "text/plain"})
        if p.startswith("/plain/"):  # no freshness information at all
            etag = '"p-%s"' % p[7:]
            if self.headers.get("If-None-Match") == etag:
                return self.send(304, b"", {"ETag": etag})
            return self.send(200, text(p), {"Content-Type": "text/html", "ETag": etag})
        if p == "/img.png":
            return self.send(200, PNG, {"Content-Type": "image/png", "Cache-Control": "max-age=60"})
        if p == "/pre.js":
            return self.send(200, PREGZ, {"Content-Type": "application/javascript", "Content-Encoding": "gzip",
                                          "Cache-Control": "max-age=60"})
        if p == "/nostore":
            return self.send(200, text(p), {"Content-Type": "text/html", "Cache-Control": "no-store"})
        return self.send(404, b"no such page\n", {"Content-Type": "text/plain"})

    do_HEAD = do_GET

    def do_POST(self):
        self.count()
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/_down":
            DOWN[0] = True
        elif self.path == "/_up":
            DOWN[0] = False
        return self.send(200, body, {"Content-Type": "application/octet-stream"})


class Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # A client that left (a cache that gave up on /hang, say) is no error.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


if __name__ == "__main__":
    # argv: PORT_FILE [PORT] (a port to bind again after a restart)
    srv = Server(("127.0.0.1", int(sys.argv[2]) if len(sys.argv) > 2 else 0), Handler)
    with open(sys.argv[1], "w") as f:
        f.write(str(srv.server_address[1]))
    srv.serve_forever()
