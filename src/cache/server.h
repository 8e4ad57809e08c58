#pragma once
// `ferry cache serve`: the HTTP/1.1 front of the caching proxy (keep-alive,
// chunked and sized request bodies, HEAD, deadlines on idle and slow
// clients), handing each request to a Proxy on worker threads. Beast stays
// inside server.cc.

#include <chrono>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "cache/disk_store.h"
#include "cache/proxy.h"
#include "http/client.h"

namespace ferry::cache {

struct ServeOptions {
  std::string listen = "127.0.0.1:8080";  // HOST:PORT (port 0: pick one)
  std::string port_file;                  // the bound port is written here
  ProxyOptions proxy;
  DiskStoreOptions store;
  http::ClientOptions origin;
  int io_threads = 2;      // event loop
  int worker_threads = 32;  // origin fetches and disk I/O
  uint64_t max_request_body = 8 << 20;
  // Bounds the wait for a complete request (and for the next one on a
  // kept-alive connection) and each write of an answer.
  std::chrono::milliseconds client_timeout{60'000};
};

// Serves until SIGINT or SIGTERM (base/cancel.h); errors in setting up
// (a bad --listen, a port in use, an unusable --dir) are returned.
Status ServeCache(const ServeOptions& options);

}  // namespace ferry::cache
