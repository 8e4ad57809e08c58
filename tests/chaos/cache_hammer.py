#!/usr/bin/env python3
"""Clients for the cache chaos run: THREADS threads GET /text/NAME (NAME one
of COUNT) from the cache at URL for SECONDS, asking for identity or gzip at
random, and check every answer: a 200 must be exactly the origin's page
(cache_origin.text, decoded when gzip-coded); a 5xx or a connection error is
a clean failure (the origin or a tier was down); anything else — a 200
with other bytes, a 206 nobody asked for — is corruption.

  cache_hammer.py URL COUNT THREADS SECONDS
Prints one JSON line: requests, ok, clean_errors, corrupt (and the first
corrupt answer); exits 1 when anything was corrupt."""
import gzip, json, os, random, sys, threading, time, urllib.error, urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from cache_origin import text  # noqa: E402

url, count, threads, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
expected = {}
lock = threading.Lock()
stats = {"requests": 0, "ok": 0, "clean_errors": 0, "errors_by": {}, "corrupt": 0, "first_corrupt": None}


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


def worker(seed, deadline):
    rng = random.Random(seed)
    while time.monotonic() < deadline:
        r = one(rng)
        with lock:
            stats["requests"] += 1
            if r == "ok":
                stats["ok"] += 1
            elif r.startswith("clean"):
                stats["clean_errors"] += 1
                stats["errors_by"][r[6:]] = stats["errors_by"].get(r[6:], 0) + 1
            else:
                stats["corrupt"] += 1
                stats["first_corrupt"] = stats["first_corrupt"] or r


deadline = time.monotonic() + seconds
ts = [threading.Thread(target=worker, args=(i, deadline)) for i in range(threads)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(json.dumps(stats))
sys.exit(1 if stats["corrupt"] else 0)
