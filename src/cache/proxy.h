#pragma once
// The caching reverse proxy's logic for one request, without sockets: route
// it, answer from the cache when the entry is fresh, else fetch from the
// origin (conditionally when the stale entry has validators), store what
// may be stored (zstd-compressed when eligible) and build the answer for
// this client (the stored zstd bytes for a client that takes zstd, decoded
// bytes otherwise; 304 for a matching conditional request). Methods other
// than GET and HEAD pass through uncached. Blocking: the server runs it on
// worker threads. Thread-safe.
//
// Answers carry `X-Cache: HIT|MISS|EXPIRED|STALE|BYPASS` and `Age`.
// Limitations of this first version: bodies are held in memory (an origin
// body over max_object is answered 502, not streamed), concurrent misses
// for one key are not yet coalesced, Range is ignored (the whole
// representation is sent, which RFC 9110 allows).

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cache/disk_store.h"
#include "cache/freshness.h"
#include "cache/routing.h"
#include "cache/transcode_policy.h"
#include "http/client.h"

namespace ferry::cache {

struct ProxyOptions {
  Routing routing;
  TranscodeSettings transcode;
  CacheSettings cache;
  int level = 3;                    // zstd level for transcoded entries
  uint64_t max_object = 64 << 20;   // largest origin body handled
};

struct ProxyRequest {
  std::string method = "GET";
  std::string target = "/";
  http::Headers headers;  // as received
  std::string body;
};

struct ProxyResponse {
  int status = 200;
  http::Headers headers;  // without Content-Length (the server sets it)
  std::string body;       // empty for HEAD and 304
  // For HEAD: the Content-Length a GET would have carried.
  std::optional<uint64_t> head_length;
};

struct ProxyCounters {
  std::atomic<uint64_t> hits{0}, misses{0}, expired{0}, stale{0}, bypass{0};
  std::atomic<uint64_t> origin_fetches{0}, errors{0};
  std::atomic<uint64_t> logical_bytes{0}, stored_bytes{0};  // of entries written
};

class Proxy {
 public:
  Proxy(ProxyOptions options, DiskStore* store, http::Client* origin);
  ProxyResponse Handle(const ProxyRequest& req);
  const ProxyCounters& counters() const { return counters_; }

 private:
  struct Fetched;
  ProxyResponse PassThrough(const ProxyRequest& req, const Route& route);
  Result<Fetched> Fetch(const Route& route, const std::string& method, const http::Headers& headers,
                        const std::string& body);
  ProxyResponse Serve(const ProxyRequest& req, const EntryMeta& meta, std::string_view stored,
                      const char* x_cache, SysSeconds now);

  ProxyOptions options_;
  DiskStore* store_;
  http::Client* origin_;
  ProxyCounters counters_;
};

// Header helpers (case-insensitive names).
std::string HeaderValue(const http::Headers& h, std::string_view name);
// Without hop-by-hop fields (RFC 9110 7.6.1, and any the Connection field
// names) and without Content-Length.
http::Headers EndToEnd(const http::Headers& h);

}  // namespace ferry::cache
