#pragma once
// `ferry cache serve`: the caching proxy behind ferry's HTTP server
// (http/server.h: keep-alive, request limits, deadlines on idle and slow
// clients, TLS, a graceful stop), fresh hits in memory answered on the
// event loop and the rest by the Proxy on worker threads.

#include <chrono>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "cache/disk_store.h"
#include "cache/proxy.h"
#include "http/client.h"
#include "net/server_options.h"

namespace ferry::cache {

struct ServeOptions {
  std::string listen = "127.0.0.1:8080";  // net/listen_address.h (port 0: pick one)
  std::string port_file;                  // the bound port is written here
  // HTTPS when given: on `listen_tls` beside a plain `listen`, else on
  // `listen` itself. Several certificates: the client's SNI name picks
  // (the first by default). SIGHUP reads them again.
  net::TlsFiles tls;
  std::string listen_tls;
  std::string tls_port_file;
  bool http2 = true;  // h2 by ALPN over TLS, h2c with prior knowledge
  ProxyOptions proxy;
  DiskStoreOptions store;
  http::ClientOptions origin;
  int io_threads = 2;       // event loops
  int worker_threads = 32;  // disk I/O and waits for a fill
  size_t max_connections = 10'000;
  uint64_t max_request_body = 8 << 20;
  // Bounds the wait for a complete request (and for the next one on a
  // kept-alive connection) and each write of an answer.
  std::chrono::milliseconds client_timeout{60'000};
};

// Serves until SIGINT or SIGTERM (base/cancel.h), then stops gracefully;
// reloads the TLS certificates on SIGHUP (base/reload.h: a reload that
// fails keeps the old ones and logs one line);
// errors in setting up (a bad --listen, a port in use, an unusable --dir or
// certificate) are returned.
Status ServeCache(const ServeOptions& options);

}  // namespace ferry::cache
