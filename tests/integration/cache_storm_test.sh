#!/usr/bin/env bash
# A miss storm against ferry cache serve: 2,000 concurrent requests for
# distinct large bodies (1 MB each, larger than --max-object, so each is
# streamed through a spool while its origin trickles it over 3.2 s). The
# upstream exchanges run on a bounded pool (--upstream-threads 16,
# --upstream-queue 4): the server's thread count never grows past its
# resting count plus those 16 (and the 4 that write big objects to disk),
# the requests the pool takes get every byte,
# the rest get 503 with Retry-After at once, and the metrics count them.
source "$(dirname "$0")/lib.sh"
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 not installed"
source "$FERRY_SOURCE/tests/integration/cache_lib.sh"

start_origin
start_cache_named storm --origin "$ORIGIN" --dir "$TMP/storm" --max-object 256K \
  --upstream-threads 16 --upstream-queue 4
threads() { awk '/^Threads:/ { print $2 }' "/proc/$CACHE_PID/status"; }
# One request that is answered, so every thread that is started once has been.
curl -sf "$C/text/warm" -o /dev/null || fail "the cache does not answer"
rest=$(threads)

/usr/bin/python3 - "$C" "$CACHE_PID" "$TMP/storm.json" <<'PY' || fail "the storm did not run"
import asyncio, json, resource, sys, time
url, pid, out = sys.argv[1], sys.argv[2], sys.argv[3]
host, port = url.split("//")[1].split(":")
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
N = 2000
peak = [0]

async def sample(done):
    while not done.is_set():
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("Threads:"):
                peak[0] = max(peak[0], int(line.split()[1]))
        await asyncio.sleep(0.02)

async def one(i):
    r, w = await asyncio.open_connection(host, int(port))
    w.write(f"GET /trickle/{i} HTTP/1.1\r\nHost: storm\r\nConnection: close\r\n\r\n".encode())
    await w.drain()
    data = await r.read()
    w.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    return int(lines[0].split()[1]), len(body), headers.get("retry-after")

async def main():
    done = asyncio.Event()
    sampler = asyncio.create_task(sample(done))
    t0 = time.monotonic()
    results = await asyncio.gather(*(one(i) for i in range(N)))
    done.set()
    await sampler
    json.dump({"results": results, "peak": peak[0], "seconds": time.monotonic() - t0}, open(out, "w"))

asyncio.run(main())
PY
/usr/bin/python3 - "$TMP/storm.json" "$rest" "$(metric "$C" ferry_cache_upstream_rejected_total)" <<'PY' ||
import json, sys
d = json.load(open(sys.argv[1]))
rest, rejected = int(sys.argv[2]), int(float(sys.argv[3]))
res = d["results"]
ok = [r for r in res if r[0] == 200]
busy = [r for r in res if r[0] == 503]
print(f"storm: {len(res)} requests in {d['seconds']:.1f} s: {len(ok)} answered 200, {len(busy)} 503; "
      f"threads at rest {rest}, at peak {d['peak']}")
assert len(ok) + len(busy) == len(res), [r for r in res if r[0] not in (200, 503)][:5]
assert len(ok) >= 16 and len(busy) > 0, (len(ok), len(busy))
assert all(r[1] == 1_000_000 for r in ok), [r[1] for r in ok if r[1] != 1_000_000][:5]
assert all(r[2] == "1" for r in busy), "a 503 without Retry-After"
assert rejected == len(busy), (rejected, len(busy))
# The pool's 16 threads and the 4 that write big objects to disk, started
# once; nothing else grows.
assert d["peak"] <= rest + 16 + 4, (d["peak"], rest)
PY
  fail "the miss storm"
# The pool's threads stay; what was queued ran; the server still answers.
[ "$(metric "$C" ferry_cache_upstream_threads)" = 16 ] || fail "pool threads: $(metric "$C" ferry_cache_upstream_threads)"
curl -sf "$C/text/after" -o /dev/null || fail "the cache does not answer after the storm"
echo "cache_storm_test: ok"
