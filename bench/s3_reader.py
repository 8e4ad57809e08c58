#!/usr/bin/python3
"""A light S3 reader for benchmarks: random GETs of keys from a list, signed
with SigV4 (UNSIGNED-PAYLOAD) over keep-alive connections with the standard
library only, so the reader itself takes little CPU beside what it measures
(botocore costs milliseconds of CPU per request; on a 2-core machine that
alone would slow the job under test).

Usage: s3_reader.py ENDPOINT ACCESS_KEY SECRET BUCKET KEYS_FILE THREADS STOP_FILE [SEED]

Reads random keys until STOP_FILE exists; prints one JSON line: reads,
errors (by status), and by the answer's x-ferry-answer header ("none"
without it) the count and p50/p99 latency in milliseconds.
"""
import datetime
import hashlib
import hmac
import http.client
import json
import os
import random
import sys
import threading
import time
import urllib.parse


def sign(method, host, path, key, secret, region="us-east-1"):
    now = datetime.datetime.utcnow()
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    date = amz_date[:8]
    headers = {"host": host, "x-amz-content-sha256": "UNSIGNED-PAYLOAD", "x-amz-date": amz_date}
    signed = ";".join(sorted(headers))
    canonical = "\n".join([method, path, "",
                           "".join(f"{k}:{headers[k]}\n" for k in sorted(headers)),
                           signed, "UNSIGNED-PAYLOAD"])
    scope = f"{date}/{region}/s3/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    k = ("AWS4" + secret).encode()
    for part in (date, region, "s3", "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = (f"AWS4-HMAC-SHA256 Credential={key}/{scope}, "
                                f"SignedHeaders={signed}, Signature={sig}")
    return headers


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else 0.0


def main():
    endpoint, key, secret, bucket, keys_file, threads, stop = sys.argv[1:8]
    seed = int(sys.argv[8]) if len(sys.argv) > 8 else 1
    with open(keys_file) as f:
        keys = [line.strip() for line in f if line.strip()]
    u = urllib.parse.urlparse(endpoint)
    host = u.netloc
    lock = threading.Lock()
    lat, errors = {}, {}

    def work(n):
        r = random.Random(seed * 1000 + n)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        while not os.path.exists(stop):
            k = r.choice(keys)
            path = "/" + bucket + "/" + urllib.parse.quote(k, safe="/~")
            t0 = time.monotonic()
            try:
                conn.request("GET", path, headers=sign("GET", host, path, key, secret))
                resp = conn.getresponse()
                resp.read()
                ms = (time.monotonic() - t0) * 1000
                with lock:
                    if resp.status == 200:
                        lat.setdefault(resp.getheader("x-ferry-answer", "none"), []).append(ms)
                    else:
                        errors[str(resp.status)] = errors.get(str(resp.status), 0) + 1
            except (OSError, http.client.HTTPException):
                with lock:
                    errors["connection"] = errors.get("connection", 0) + 1
                conn.close()
                conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(int(threads))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(json.dumps({"reads": sum(len(v) for v in lat.values()), "errors": errors,
                      "answers": {a: {"n": len(v), "p50_ms": round(percentile(v, 0.5), 2),
                                      "p99_ms": round(percentile(v, 0.99), 2)}
                                  for a, v in lat.items()}}))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
