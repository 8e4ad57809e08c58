#!/usr/bin/python3
"""A client of several gateways in front of one job, as an application behind
a load balancer: reads, writes and deletes with botocore (Debian's awscli's
copy), each request to the next gateway in turn, and to the next one again
when a gateway is gone (connection refused or reset: it was killed).

Usage: gateway_pool_client.py ENDPOINTS ACCESS_KEY SECRET SRC_DIR OUT
         [--threads N] [--mutable-every M] [--until FILE] [--seed N]

ENDPOINTS is comma-separated. SRC_DIR holds the source's files (key =
relative path). Every M-th key (sorted) is the clients' to change: thread t
overwrites and deletes only its share of them, and writes new keys under
new/t<t>/; the other keys are only read, and each read is checked against
its source file. After each write or delete the thread reads the key back
through another gateway. Runs until FILE exists.

OUT gets one JSON object: the final state of every key a client changed
({"key": md5 or null for deleted}), how many writes each got ("writes"),
the keys whose request was retried on another gateway after a failure
("retried"), and counts. Prints the counts as one JSON line; exit status 0
when every read matched and every request succeeded on some gateway.
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
    from botocore.exceptions import ClientError, EndpointConnectionError, ConnectionClosedError
    from urllib3.exceptions import ProtocolError
except ImportError as e:
    print(f"SKIP: awscli's botocore not importable: {e}")
    sys.exit(77)

GONE = (EndpointConnectionError, ConnectionClosedError, ProtocolError, ConnectionError)


class Pool:
    """The gateways, tried in turn; a request that finds one gone goes on."""

    def __init__(self, endpoints, key, secret):
        session = botocore.session.get_session()
        self.clients = [session.create_client(
            "s3", region_name="us-east-1", endpoint_url=e, aws_access_key_id=key,
            aws_secret_access_key=secret,
            config=Config(retries={"max_attempts": 1}, connect_timeout=2, read_timeout=60,
                          s3={"addressing_style": "path"})) for e in endpoints]
        self.next = 0
        self.lock = threading.Lock()

    def call(self, op, stats, **kw):
        """op on the next gateway; returns (result, retried). A 503 (the
        key busy past --busy-wait) is retried after a pause."""
        with self.lock:
            first = self.next
            self.next = (self.next + 1) % len(self.clients)
        retried = False
        for attempt in range(40):
            client = self.clients[(first + attempt) % len(self.clients)]
            try:
                return getattr(client, op)(**kw), retried
            except GONE:
                stats["failovers"] += 1
                retried = True
            except ClientError as e:
                code = e.response["Error"]["Code"]
                if code in ("NoSuchKey", "404"):
                    return None, retried
                if e.response["ResponseMetadata"]["HTTPStatusCode"] != 503:
                    raise
                stats["busy"] += 1
                retried = True
                time.sleep(0.2)
        raise RuntimeError(f"{op} {kw.get('Key')}: no gateway answered")


def md5_of(data):
    return hashlib.md5(data).hexdigest()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("endpoints")
    p.add_argument("access_key")
    p.add_argument("secret")
    p.add_argument("src_dir")
    p.add_argument("out")
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--mutable-every", type=int, default=20)
    p.add_argument("--until", required=True)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()

    keys = sorted(os.path.relpath(os.path.join(d, f), a.src_dir)
                  for d, _, files in os.walk(a.src_dir) for f in files)
    mutable = keys[::a.mutable_every]
    readonly = [k for i, k in enumerate(keys) if i % a.mutable_every != 0]
    pool = Pool(a.endpoints.split(","), a.access_key, a.secret)
    lock = threading.Lock()
    final, writes, retried = {}, {}, set()
    stats = {"reads": 0, "checked": 0, "mismatches": 0, "writes": 0, "deletes": 0,
             "readbacks": 0, "failovers": 0, "busy": 0, "errors": 0}
    problems = []

    def source_md5(key):
        with open(os.path.join(a.src_dir, key), "rb") as f:
            return md5_of(f.read())

    def body_md5(key):
        r, again = pool.call("get_object", stats, Bucket="bkt", Key=key)
        return (None if r is None else md5_of(r["Body"].read())), again

    def run(t):
        rng = random.Random(a.seed * 1000 + t)
        mine = mutable[t::a.threads]
        n = 0
        while not os.path.exists(a.until):
            try:
                roll = rng.random()
                if roll < 0.85 or not mine:
                    key = rng.choice(readonly)
                    got, _ = body_md5(key)
                    with lock:
                        stats["reads"] += 1
                        stats["checked"] += 1
                        if got != source_md5(key):
                            stats["mismatches"] += 1
                            problems.append(f"read {key}: {got} is not the source's")
                    continue
                if roll < 0.95:
                    n += 1
                    key = f"new/t{t}/{n:05d}" if rng.random() < 0.5 else rng.choice(mine)
                    body = rng.randbytes(rng.randint(1, 4096))
                    _, again = pool.call("put_object", stats, Bucket="bkt", Key=key, Body=body)
                    want, counter = md5_of(body), "writes"
                else:
                    key = rng.choice(mine)
                    _, again = pool.call("delete_object", stats, Bucket="bkt", Key=key)
                    want, counter = None, "deletes"
                with lock:
                    final[key] = want
                    stats[counter] += 1
                    if want is not None:
                        writes[key] = writes.get(key, 0) + 1
                    if again:
                        retried.add(key)
                got, _ = body_md5(key)  # through the next gateway
                with lock:
                    stats["readbacks"] += 1
                    if got != want:
                        stats["mismatches"] += 1
                        problems.append(f"read back {key}: {got}, wrote {want}")
            except Exception as e:  # noqa: BLE001 - every failure is reported
                with lock:
                    stats["errors"] += 1
                    problems.append(f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=run, args=(t,)) for t in range(a.threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    with open(a.out, "w") as f:
        json.dump({"final": final, "writes": writes, "retried": sorted(retried),
                   "stats": stats, "problems": problems[:20]}, f)
    print(json.dumps(stats))
    for line in problems[:5]:
        print(line, file=sys.stderr)
    return 0 if stats["mismatches"] == 0 and stats["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
