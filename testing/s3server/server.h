#pragma once
// The network side: accept loop and one coroutine per connection (HTTP/1.1
// keep-alive, optionally TLS), on Boost.Asio/Beast with C++20 coroutines.
// Every socket operation has a deadline; SIGINT/SIGTERM stop the server.

#include <chrono>
#include <string>

#include "base/status.h"
#include "service.h"

namespace ferry::s3server {

struct ServerOptions {
  std::string listen = "127.0.0.1:0";  // host:port; port 0 picks a free port
  bool allow_remote = false;           // false: refuse non-loopback addresses
  int threads = 2;                     // io_context threads
  bool tls = false;                    // HTTPS with a generated self-signed cert
  std::string cert_out;                // where to write the cert PEM (--tls)
  std::string port_file;               // where to write the bound port ("" = none)
  std::chrono::seconds idle_timeout{120};  // keep-alive wait for the next request
  std::chrono::seconds io_timeout{60};     // each read/write within a request
  bool verbose = false;                    // one log line per request on stderr
};

// Binds, writes the port file and prints "listening on http://HOST:PORT",
// then serves until SIGINT or SIGTERM. Returns an error if it cannot start.
Status RunServer(const ServerOptions& options, Service& service);

}  // namespace ferry::s3server
