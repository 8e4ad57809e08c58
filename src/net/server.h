#pragma once
// The server core every ferry daemon is built on (the cache's HTTP front
// end, the volume daemon's API, the NBD server): it parses the listen
// address (net/listen_address.h), binds TCP or a Unix-domain socket, runs
// `io_threads` event loops (one thread each, no locks between them; new
// connections go round-robin), accepts up to max_connections, does the TLS
// handshake under a deadline when given a certificate, and hands each
// connection to the session coroutine. Blocking work (disk, a device, a
// handler that waits) goes to a bounded pool of worker threads through
// Blocking(). Stop() is graceful: no new connections, idle ones closed,
// busy ones given drain_timeout to finish their answer.
//
// Asio inside: include it only from the .cc files that run sessions.
//
//   net::Server server(options, [&](net::Connection& c) { return MySession(c); });
//   FERRY_RETURN_IF_ERROR(server.Start());
//   ...
//   server.Stop();

#include <utility>  // before Boost.Asio under g++ 12

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>

#include "base/status.h"
#include "net/connection.h"
#include "net/server_options.h"

namespace ferry::net {

// The completion token of session code's co_awaits: an error comes back in
// `ec`, never as an exception.
inline auto AwaitInto(boost::system::error_code& ec) {
  return boost::asio::redirect_error(boost::asio::use_awaitable, ec);
}

struct ServerStats {
  uint64_t accepted = 0;   // connections handed to a session
  uint64_t rejected = 0;   // closed at once: over max_connections, or a failed TLS handshake
  uint64_t reclaimed = 0;  // idle connections closed to make room (ServerOptions::reclaim_idle)
  uint64_t open = 0;       // sessions running now
};

class Server {
 public:
  // The session runs on the connection's event loop; when it returns the
  // connection is closed. It must end soon after its connection is closed.
  using Session = std::function<boost::asio::awaitable<void>(Connection&)>;

  Server(ServerOptions options, Session session);
  ~Server();  // Stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and starts the event loops on their own threads. A bad address,
  // an address in use or an unreadable certificate is a one-line error
  // naming options.flag.
  Status Start();
  // The bound TCP port (0 on a Unix-domain socket).
  uint16_t port() const;
  // What is listened on, e.g. "127.0.0.1:43817" or "unix:/run/x.sock".
  std::string address() const;
  // The same of options.tls_listen (0 and "" without one).
  uint16_t tls_port() const;
  std::string tls_address() const;
  // Loads the TLS files again (net/tls_context.h): new handshakes use
  // them, connections already open go on with what they began with. On
  // failure (a file unreadable, a key that does not match) the current
  // ones stay and the one-line error is returned. Any thread.
  Status ReloadTls();
  ServerStats stats() const;
  // Idempotent; joins every thread. A Unix socket's file is removed.
  void Stop();

  // Runs `f` (moved from) on a worker thread and resumes the caller, on
  // its loop, with the result. At most worker_threads calls run at once;
  // the rest queue. `f` must be a named variable: g++ 12 destroys a
  // lambda's captures twice when the closure is a temporary in a co_await
  // expression, so a temporary does not compile here.
  //
  //   auto read = [dev, req] { return dev->Read(req); };
  //   Done d = co_await server.Blocking(read);
  template <class F>
  boost::asio::awaitable<std::invoke_result_t<F&>> Blocking(F& f) {
    return RunOn(workers(), f);
  }

  // With tls.in_band: upgrades a plain TCP connection to TLS and does the
  // server's handshake under handshake_timeout. False (the connection is
  // then unusable) when it fails, or when there is no TLS to start.
  boost::asio::awaitable<bool> StartTls(Connection& c);
  bool tls_configured() const;

  // Blocking() on a pool of the caller's: runs `f` (moved from) on `pool`
  // and resumes the caller on its loop with the result.
  template <class F>
  static boost::asio::awaitable<std::invoke_result_t<F&>> RunOn(boost::asio::thread_pool& pool, F& f) {
    return boost::asio::co_spawn(pool, Call<F>(std::make_shared<F>(std::move(f))), boost::asio::use_awaitable);
  }

 private:
  // A plain function, not a capturing lambda: g++ 12 destroys a lambda's
  // captures twice when the lambda itself is handed to co_spawn.
  template <class F>
  static boost::asio::awaitable<std::invoke_result_t<F&>> Call(std::shared_ptr<F> f) {
    co_return (*f)();
  }
  boost::asio::thread_pool& workers();

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ferry::net
