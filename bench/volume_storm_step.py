#!/usr/bin/env python3
"""What bench/volume_storm_bench.sh measures, gathered and tabled.

  volume_storm_step.py N DAEMONS WALL_MS GETS BYTES DISK TMP CLK_TCK CORES
      one step of the storm as a JSON line, from the files the script left
      in TMP: replay.json (ferry-nbd-replay's summary), replay.time
      (/usr/bin/time: wall, user, sys, max RSS of the replay), run/cost
      ("K CPU_TICKS HWM_KIB" per daemon, "cache TICKS", "s3 TICKS"), fds
      ("K MOST" per daemon) and run/dK/metrics (each daemon's /metrics)
  volume_storm_step.py --table STEPS.jsonl LATENCY_MS BANDWIDTH RPS RAMP_MS
      the markdown tables of every step
"""
import glob
import json
import re
import sys

BUCKET = re.compile(r'^ferry_volume_trigger_wait_seconds_bucket\{le="([^"]+)"\} (\S+)$')
COMMITS = re.compile(r'^ferry_volume_bitmap_commits_total\{[^}]*\} (\S+)$')


def quantile(bounds, cumulative, q):
    """Prometheus's histogram_quantile: linear within the bucket."""
    total = cumulative[-1] if cumulative else 0
    if total == 0:
        return 0.0
    rank = q * total
    prev_bound, prev_count = 0.0, 0.0
    for bound, count in zip(bounds, cumulative):
        if count >= rank:
            if bound == float("inf"):
                return prev_bound
            return prev_bound + (bound - prev_bound) * (rank - prev_count) / max(count - prev_count, 1e-9)
        prev_bound, prev_count = bound, count
    return prev_bound


def step(argv):
    n, d, wall_ms, gets, origin_bytes, disk, tmp, tck, cores = argv
    n, d, wall_ms, gets, origin_bytes, disk = int(n), int(d), int(wall_ms), int(gets), int(origin_bytes), int(disk)
    tck, cores = float(tck), int(cores)
    replay = json.load(open(f"{tmp}/replay.json"))
    r_wall, r_user, r_sys, r_rss = open(f"{tmp}/replay.time").read().split()[-4:]
    daemons, other_cpu = [], 0.0
    for line in open(f"{tmp}/run/cost"):
        f = line.split()
        if f[0] in ("cache", "s3"):
            other_cpu += int(f[1]) / tck
        else:
            daemons.append({"cpu_s": int(f[1]) / tck, "hwm_kib": int(f[2])})
    fds = {}
    for line in open(f"{tmp}/fds") if glob.glob(f"{tmp}/fds") else []:
        k, most = line.split()
        fds[int(k)] = int(most)
    for k, dm in enumerate(daemons):
        dm["fds"] = fds.get(k, 0)
    buckets, commits = {}, 0.0
    for path in sorted(glob.glob(f"{tmp}/run/d*/metrics")):
        for line in open(path):
            m = BUCKET.match(line)
            if m:
                le = float("inf") if m.group(1) == "+Inf" else float(m.group(1))
                buckets[le] = buckets.get(le, 0.0) + float(m.group(2))
            m = COMMITS.match(line)
            if m:
                commits += float(m.group(1))
    bounds = sorted(buckets)
    cumulative = [buckets[b] for b in bounds]
    cpu_all = sum(dm["cpu_s"] for dm in daemons) + other_cpu + float(r_user) + float(r_sys)
    print(json.dumps({
        "guests": n, "daemons": d, "wall_ms": wall_ms, "replay": replay,
        "origin_gets": gets, "origin_bytes": origin_bytes, "disk_bytes": disk,
        "trigger_ms": {"p50": 1000 * quantile(bounds, cumulative, 0.5),
                       "p99": 1000 * quantile(bounds, cumulative, 0.99),
                       "count": cumulative[-1] if cumulative else 0},
        "bitmap_commits": commits, "daemons_cost": daemons,
        "replay_cpu_s": float(r_user) + float(r_sys), "replay_rss_kib": int(r_rss),
        "cpu_busy": cpu_all / (wall_ms / 1000.0 * cores),
    }))


def table(argv):
    path, latency, bandwidth, rps, ramp = argv
    steps = [json.loads(line) for line in open(path) if line.strip()]
    alone = steps[0]
    boot_alone = alone["replay"]["boot_ms"]["p50"]
    set_bytes = max(alone["origin_bytes"], 1)
    print(f"### Boot storm: guests replaying a recorded qemu boot on lazy clones of one snapshot")
    print()
    print(f"Origin: ferry-test-s3, {latency} ms per request, {bandwidth}B/s and {rps} requests/s in all, "
          f"behind one `ferry cache serve` (empty at each step); 64 KiB chunks; guests start over {ramp} ms. "
          f"One guest alone: boot {boot_alone / 1000:.2f} s, origin {set_bytes / 1e6:.1f} MB "
          f"({alone['origin_gets']} GETs), its clone {alone['disk_bytes'] / 2**20:.1f} MiB on disk.")
    print()
    print("| guests (daemons) | boot p50 / p99 / max | p50 ÷ alone | failed | origin bytes ÷ boot set (GETs) "
          "| trigger wait p50 / p99 | bitmap commits/s | machine CPU busy |")
    print("|---|---|---|---|---|---|---|---|")
    for s in steps[1:]:
        if "skipped" in s:
            print(f"| {s['guests']} | not run: {s['skipped']} | | | | | | |")
            continue
        b = s["replay"]["boot_ms"]
        fail = s["replay"]["failed"] + (1 if s["replay"]["read_mismatches"] else 0)
        print(f"| {s['guests']} ({s['daemons']}) | {b['p50'] / 1000:.2f} / {b['p99'] / 1000:.2f} / "
              f"{b['max'] / 1000:.2f} s | {b['p50'] / boot_alone:.2f}× | {s['replay']['failed']}"
              f"{' (reads differed!)' if s['replay']['read_mismatches'] else ''} | "
              f"{s['origin_bytes'] / set_bytes:.2f}× ({s['origin_gets']}) | "
              f"{s['trigger_ms']['p50']:.1f} / {s['trigger_ms']['p99']:.1f} ms | "
              f"{s['bitmap_commits'] / (s['wall_ms'] / 1000):.0f} | {100 * s['cpu_busy']:.0f}% |")
    print()
    print("| guests | per daemon: peak RSS / CPU / most open files | per guest: RSS / CPU / files "
          "| replay client: CPU, RSS | clones on disk |")
    print("|---|---|---|---|---|")
    for s in steps[1:]:
        if "skipped" in s:
            continue
        ds = s["daemons_cost"]
        per_daemon = s["guests"] / max(len(ds), 1)
        hwm = max(x["hwm_kib"] for x in ds)
        cpu = max(x["cpu_s"] for x in ds)
        fds = max(x["fds"] for x in ds)
        print(f"| {s['guests']} | {hwm / 1024:.0f} MiB / {cpu:.1f} s / {fds} (the most of {len(ds)}) | "
              f"{hwm / per_daemon:.0f} KiB / {1000 * cpu / per_daemon:.1f} ms / {fds / per_daemon:.1f} | "
              f"{s['replay_cpu_s']:.1f} s, {s['replay_rss_kib'] / 1024:.0f} MiB | {s['disk_bytes'] / 2**30:.1f} GiB |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--table":
        table(sys.argv[2:])
    else:
        step(sys.argv[1:])
