-- wrk script for the cache benchmarks (bench/cache_bench_lib.sh's run_wrk).
--
--   wrk ... -s bench/cache_hit_urls.lua URL -- PATHS_FILE ACCEPT_ENCODING
--
-- Every request takes the next path of PATHS_FILE (one per line), round and
-- round; the two threads start half the list apart. Each request sends
-- `Accept-Encoding: ACCEPT_ENCODING` (e.g. "zstd", or "gzip, deflate, br,
-- zstd" as Chromium sends over https), or none when it is "". Requests
-- are formatted once, in init(), so the client's per-request cost is the same
-- for every peer. There is no response() hook: wrk parses headers into Lua
-- only when there is one, and that would slow the client down; hits are
-- checked by the caller instead (warm-up headers, origin's access log).
--
-- done() prints one line for the caller:
--   RESULT requests bytes seconds connect read write status timeout p50_ms p99_ms

local next_id = 0

function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
end

local reqs, n, i

function init(args)
  local headers = {}
  if args[2] == nil then
    error("usage: -- PATHS_FILE ACCEPT_ENCODING (\"\" for none)")
  elseif args[2] ~= "" then
    headers["Accept-Encoding"] = args[2]
  end
  reqs = {}
  for path in io.lines(args[1]) do
    reqs[#reqs + 1] = wrk.format("GET", path, headers)
  end
  n = #reqs
  i = (id * math.floor(n / 2)) % n
end

function request()
  i = i % n + 1
  return reqs[i]
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %d %d %.6f %d %d %d %d %d %.3f %.3f\n",
    summary.requests, summary.bytes, summary.duration / 1e6,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
