#pragma once
// An HTTP/1.1 client over an asynchronous core: each request runs as a C++20
// coroutine on the client's own io_context threads (Boost.Asio/Beast).
// Send() waits for it on the caller's thread; SendAsync() calls back instead,
// so one thread can keep many requests in flight. Connections are kept alive and pooled
// per endpoint; TLS verifies the peer against the system store or a CA file.
//
// Deadlines: connecting (name lookup, TCP, TLS) is bounded by connect_timeout;
// every later socket operation (a write or read of part of a message) by
// io_timeout, so a stalled peer fails in bounded time while a slow but
// progressing transfer does not.
//
// Beast stays out of this header (pimpl) so that only client.cc pays its
// compile cost.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "http/endpoint.h"
#include "http/headers.h"
#include "store/stream.h"

namespace ferry::http {

struct Response;

struct Request {
  std::string method = "GET";
  std::string target = "/";    // origin-form, already percent-encoded
  Headers headers;             // Host is added when absent
  ByteSource* body = nullptr;  // not owned; Rewind() is used to retry
  uint64_t body_size = 0;      // Content-Length when body is set
  // Called with the status line and headers of a 2xx answer before any of
  // its body reaches the sink; an error aborts the exchange (and closes the
  // connection) with that error. Runs on a client thread: keep it short.
  std::function<Status(const Response&)> check_headers;
};

struct Response {
  int status = 0;
  Headers headers;
  // The body of a non-2xx response (or of any response when no sink was
  // given), capped at 1 MiB; the rest is discarded.
  std::string body;

  // Case-insensitive header lookup; nullptr when absent.
  const std::string* Find(std::string_view name) const;
  std::string Get(std::string_view name) const {
    const std::string* v = Find(name);
    return v ? *v : std::string();
  }
};

struct ClientOptions {
  std::chrono::milliseconds connect_timeout{10'000};  // default 10 s
  std::chrono::milliseconds io_timeout{60'000};       // default 60 s idle
  size_t max_idle_per_endpoint = 64;                  // pooled connections kept
  std::string ca_file;                                // PEM bundle; "" = the system store
  bool verify_tls = true;                             // never false outside tests of this switch
  int io_threads = 2;                                 // threads running the event loop
  // Threads that read request bodies which may wait (ByteSource::MayWait:
  // a body relayed as it arrives), so no loop waits on one; past this many
  // at once, such reads queue.
  int body_reader_threads = 16;
};

struct ClientStats {
  std::atomic<uint64_t> connections_opened{0};
  std::atomic<uint64_t> connections_reused{0};
  std::atomic<uint64_t> bytes_sent{0};      // bodies only
  std::atomic<uint64_t> bytes_received{0};  // bodies only
};

class Client {
 public:
  explicit Client(ClientOptions options);
  ~Client();  // cancels nothing in flight: callers finish their Send()s first
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends `req` and waits for the response. A 2xx body is streamed into
  // `sink` when it is non-null; other bodies land in Response::body. Returns a
  // Status only for transport failures (kNetwork, kTimeout, kCorruption for a
  // body cut short, or the sink's or source's own error); any HTTP status is
  // a Response. A request that fails on a reused idle connection before any
  // response byte arrived is retried once on a new connection.
  // Must not be called from inside a sink or source of another Send().
  Result<Response> Send(const Endpoint& endpoint, const Request& req, ByteSink* sink);
  // The same, but `*out` keeps the status line and headers even when the
  // transfer then fails (a body cut short), so a caller can tell which
  // version of an object it was reading.
  Status Send(const Endpoint& endpoint, const Request& req, ByteSink* sink, Response* out);

  // Send() without the wait: `done` is called exactly once, on a client
  // thread, with what Send() would return. `req`, `sink`, `out` and anything
  // they point to must stay alive until then. `done` must not block (it may
  // start another request); the Client must outlive every call in flight.
  void SendAsync(const Endpoint& endpoint, const Request& req, ByteSink* sink, Response* out,
                 std::function<void(Status)> done);
  // Calls `fn` on a client thread once `delay` has passed (the backoff of an
  // asynchronous caller). A Client destroyed first drops `fn` uncalled.
  void RunAfter(std::chrono::nanoseconds delay, std::function<void()> fn);

  const ClientStats& stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ferry::http
