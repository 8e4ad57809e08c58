#!/usr/bin/env python3
"""Clients for the cache chaos run: THREADS threads GET /text/NAME (NAME one
of COUNT) from the cache at URL for SECONDS over HTTP/1.1, asking for
identity or gzip at random, and H2 more threads each running curl over
HTTP/2 at H2_URL (https with the CA file CA, h2 by ALPN; `--parallel`: 16
streams on one connection; `--compressed`: curl takes zstd, br or gzip
and decodes it). Not h2c: Debian 12's curl 7.88.1 fails every request
after the first on a reused prior-knowledge connection ("Error in the
HTTP2 framing layer", curl issue 10634, fixed in 8.0).
Every answer is checked: a 200 must be exactly the origin's page
(cache_origin.text, decoded); a 5xx or a connection error is a clean
failure (the origin or a tier was down); anything else — a 200 with other
bytes, a 206 nobody asked for, an h2 client answered in HTTP/1.1 — is
corruption.

  cache_hammer.py URL COUNT THREADS SECONDS [H2 H2_URL CA]
Prints one JSON line: requests, ok, clean_errors, corrupt (and the first
corrupt answer), h2_requests and h2_ok; exits 1 when anything was corrupt."""
import gzip, json, os, random, subprocess, sys, tempfile, threading, time, urllib.error, urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from cache_origin import text  # noqa: E402

url, count, threads, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
h2_threads = int(sys.argv[5]) if len(sys.argv) > 5 else 0
h2_url, ca = (sys.argv[6], sys.argv[7]) if h2_threads else (None, None)
expected = {}
lock = threading.Lock()
stats = {"requests": 0, "ok": 0, "clean_errors": 0, "errors_by": {}, "corrupt": 0, "first_corrupt": None,
         "h2_requests": 0, "h2_ok": 0}


def page(name):
    with lock:
        if name not in expected:
            expected[name] = text("/text/" + name)  # the origin seeds each page by its path
        return expected[name]


def one(rng):
    name = "n%d" % rng.randrange(count)
    coding = rng.choice(["identity", "gzip"])
    req = urllib.request.Request("%s/text/%s" % (url, name), headers={"Accept-Encoding": coding})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            body, status, enc = r.read(), r.status, r.headers.get("Content-Encoding", "")
    except urllib.error.HTTPError as e:
        return "clean:%d" % e.code if e.code >= 500 else "corrupt:%d" % e.code
    except Exception as e:  # refused, reset, cut short: the client sees a failure, not wrong bytes
        return "clean:" + type(getattr(e, "reason", e)).__name__
    if status != 200:
        return "corrupt:%d" % status
    if enc == "gzip":
        body = gzip.decompress(body)
    elif enc not in ("", "identity"):
        return "corrupt:coding %s" % enc
    return "ok" if body == page(name) else "corrupt:%s differs (%d bytes)" % (name, len(body))


def h2_batch(rng, tmp):
    """16 distinct pages on one HTTP/2 connection; one result per page."""
    names = ["n%d" % i for i in rng.sample(range(count), min(16, count))]
    args = ["curl", "-s", "--http2", "--cacert", ca, "--parallel", "--parallel-max", "16", "--compressed",
            "--max-time", "20", "-w", "%{url_effective} %{http_code} %{http_version}\\n"]
    for name in names:
        args += ["-o", os.path.join(tmp, name), "%s/text/%s" % (h2_url, name)]
    out = subprocess.run(args, capture_output=True, text=True).stdout
    results = []
    for line in out.splitlines():
        target, code, version = line.rsplit(" ", 2)
        name = target.rsplit("/", 1)[1]
        path = os.path.join(tmp, name)
        if code == "000":
            results.append("clean:h2 connection")
        elif code.startswith("5"):
            results.append("clean:%s" % code)
        elif code != "200" or version != "2":
            results.append("corrupt:h2 %s HTTP/%s for %s" % (code, version, name))
        else:
            with open(path, "rb") as f:
                body = f.read()
            results.append("ok" if body == page(name) else "corrupt:%s differs over h2 (%d bytes)" % (name, len(body)))
        if os.path.exists(path):
            os.remove(path)
    if len(results) != len(names):
        results.append("corrupt:curl reported %d of %d transfers" % (len(results), len(names)))
    return results


def record(r, h2=False):
    with lock:
        stats["requests"] += 1
        stats["h2_requests"] += 1 if h2 else 0
        if r == "ok":
            stats["ok"] += 1
            stats["h2_ok"] += 1 if h2 else 0
        elif r.startswith("clean"):
            stats["clean_errors"] += 1
            stats["errors_by"][r[6:]] = stats["errors_by"].get(r[6:], 0) + 1
        else:
            stats["corrupt"] += 1
            stats["first_corrupt"] = stats["first_corrupt"] or r


def worker(seed, deadline):
    rng = random.Random(seed)
    while time.monotonic() < deadline:
        record(one(rng))


def h2_worker(seed, deadline):
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        while time.monotonic() < deadline:
            for r in h2_batch(rng, tmp):
                record(r, h2=True)


deadline = time.monotonic() + seconds
ts = [threading.Thread(target=worker, args=(i, deadline)) for i in range(threads)]
ts += [threading.Thread(target=h2_worker, args=(1000 + i, deadline)) for i in range(h2_threads)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(json.dumps(stats))
sys.exit(1 if stats["corrupt"] else 0)
