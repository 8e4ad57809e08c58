#pragma once
// What proxy.cc, proxy_fetch.cc, proxy_fill.cc and proxy_serve.cc share:
// the types of an upstream exchange and a fill, and small helpers. Not for
// use outside the Proxy.

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/thread_cpu.h"
#include "cache/cache_status.h"
#include "cache/proxy.h"

namespace ferry::cache {

struct Proxy::Fetched {
  http::Response response;
  SysSeconds request_time;
  SysSeconds response_time;
  // Set when the body outgrew max_object: the rest of it arrives here (and
  // response.body is empty).
  std::shared_ptr<Spool> spool;
};

// One upstream exchange, run on the exchange pool so that the request
// waiting for it can go on as soon as the body turns out too large to
// hold: from then on the exchange writes into a spool the client reads.
struct Proxy::Exchange {
  http::Request request;
  std::string request_body;
  std::unique_ptr<StringSource> source;
  const http::Endpoint* endpoint = nullptr;
  uint64_t cap = 0;
  std::string spool_dir;

  std::mutex mu;
  std::condition_variable cv;
  bool done = false;                 // guarded by mu
  bool spilled = false;              // guarded by mu
  Status status;                     // guarded by mu; when done
  http::Response response;           // written by the exchange thread; read once done or spilled
  http::Response head;               // status and headers of a 2xx, before its body
  std::string body;                  // up to cap bytes
  std::shared_ptr<Spool> spool;      // once spilled
};

// One upstream fill, shared with the requests that waited for it.
struct Proxy::Fill {
  // kStreamed: an answer too large to hold that is being cached, which
  // other requests may read from its spool as it fills.
  enum class Share { kObject, kError, kStreamed, kNone };
  Share share = Share::kNone;  // what a waiting request may take from it
  std::shared_ptr<const CachedObject> object;  // the answer (stored or not)
  std::shared_ptr<Fetched> streamed;           // or: an answer too large to hold
  CacheStatus status = CacheStatus::kMiss;
  int error_status = 0;
  std::string error;
};

namespace proxy_detail {

using http::EndToEnd;
using http::HeaderValue;
using http::RemoveHeader;
using http::SetHeader;
using SteadyClock = std::chrono::steady_clock;

inline SysSeconds Now() {
  return std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
}

inline int64_t UnixNow() { return Now().time_since_epoch().count(); }

inline uint64_t NanosSince(SteadyClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - t).count();
}

using ferry::ThreadCpuNanos;

// The answer for an upstream that failed: 504 for its deadline, 503 when
// the exchange pool is full (the client may retry), else 502.
int UpstreamErrorStatus(const Status& st);

// The Content-Length of `headers` when it is one valid number.
std::optional<uint64_t> ContentLengthOf(const http::Headers& headers);

// A plain-text answer the cache makes itself (503s carry Retry-After).
ProxyResponse Simple(int status, std::string_view message, CacheStatus x_cache);

}  // namespace proxy_detail
}  // namespace ferry::cache
