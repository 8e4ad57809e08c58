#!/usr/bin/python3
"""Reads objects through an S3 endpoint with botocore (Debian's awscli's copy)
and checks each body against the local file it was made from.

Usage: gateway_reader.py ENDPOINT ACCESS_KEY SECRET BUCKET EXPECT_DIR
         [--keys FILE] [--threads N] [--random SECONDS] [--until FILE]
         [--seed N] [--list-to FILE --prefix P]

Every key of FILE (one per line; default: every file under EXPECT_DIR) is
read once, in a shuffled order, by N threads; with --random, random keys
are read for SECONDS instead, or until FILE exists with --until. EXPECT_DIR
"-" reads without checking bodies. --list-to writes the bucket's keys under
--prefix to FILE and reads nothing. Prints one JSON line: reads, mismatches,
errors (by S3 code) and, by the endpoint's x-ferry-answer header (one label
per answer source; "none" for an endpoint without it), the count and the
p50/p99 latency in milliseconds. Exit status 0 when every read matched.
"""
import argparse
import hashlib
import json
import os
import random
import sys
import threading
import time

try:
    import awscli  # noqa: F401 - makes its bundled botocore importable as `botocore`
    import botocore.session
    from botocore.config import Config
    from botocore.exceptions import ClientError
except ImportError as e:
    print(f"SKIP: awscli's botocore not importable: {e}")
    sys.exit(77)


def percentile(values, q):
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("endpoint")
    p.add_argument("access_key")
    p.add_argument("secret")
    p.add_argument("bucket")
    p.add_argument("expect_dir")
    p.add_argument("--keys")
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--random", type=float, default=0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--until")
    p.add_argument("--list-to")
    p.add_argument("--prefix", default="")
    a = p.parse_args()
    check = a.expect_dir != "-"

    keys = []
    if a.keys:
        with open(a.keys) as f:
            keys = [line.strip() for line in f if line.strip()]
    elif check:
        keys = []
        for root, _, files in os.walk(a.expect_dir):
            for name in files:
                keys.append(os.path.relpath(os.path.join(root, name), a.expect_dir))
    rng = random.Random(a.seed)
    rng.shuffle(keys)

    session = botocore.session.get_session()
    client = session.create_client(
        "s3", region_name="us-east-1", endpoint_url=a.endpoint,
        aws_access_key_id=a.access_key, aws_secret_access_key=a.secret,
        config=Config(max_pool_connections=a.threads, retries={"max_attempts": 1},
                      s3={"addressing_style": "path"}))
    if a.list_to:
        with open(a.list_to, "w") as out:
            for page in client.get_paginator("list_objects_v2").paginate(Bucket=a.bucket,
                                                                          Prefix=a.prefix):
                for o in page.get("Contents", []):
                    out.write(o["Key"] + "\n")
        return 0

    lock = threading.Lock()
    stats = {"reads": 0, "mismatches": 0, "errors": {}, "latency": {}}
    bad = []
    cursor = [0]
    stop_at = time.monotonic() + a.random if a.random > 0 else None
    if a.until:
        stop_at = float("inf")

    def next_key(r):
        if stop_at is not None:
            if a.until and os.path.exists(a.until):
                return None
            return r.choice(keys) if time.monotonic() < stop_at else None
        with lock:
            if cursor[0] >= len(keys):
                return None
            cursor[0] += 1
            return keys[cursor[0] - 1]

    def work(n):
        r = random.Random(a.seed * 1000 + n)
        while True:
            key = next_key(r)
            if key is None:
                return
            t0 = time.monotonic()
            try:
                resp = client.get_object(Bucket=a.bucket, Key=key)
                body = resp["Body"].read()
                ms = (time.monotonic() - t0) * 1000
                answer = resp["ResponseMetadata"]["HTTPHeaders"].get("x-ferry-answer", "none")
                same = True
                if check:
                    with open(os.path.join(a.expect_dir, key), "rb") as f:
                        same = hashlib.md5(f.read()).digest() == hashlib.md5(body).digest()
                with lock:
                    stats["reads"] += 1
                    stats["latency"].setdefault(answer, []).append(ms)
                    if not same:
                        stats["mismatches"] += 1
                        bad.append(key)
            except ClientError as e:
                err = e.response.get("Error", {})
                code = err.get("Code", "?")
                with lock:
                    stats["errors"][code] = stats["errors"].get(code, 0) + 1
                    bad.append(key + ": " + err.get("Message", ""))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(a.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out = {"reads": stats["reads"], "mismatches": stats["mismatches"], "errors": stats["errors"],
           "answers": {k: {"n": len(v), "p50_ms": round(percentile(v, 0.5), 2),
                           "p99_ms": round(percentile(v, 0.99), 2)}
                       for k, v in stats["latency"].items()},
           "bad": bad[:5]}
    print(json.dumps(out))
    return 0 if stats["mismatches"] == 0 and not stats["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
