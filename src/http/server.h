#pragma once
// ferry's HTTP server on the server core (net/server.h). HTTP/2 when the
// client asks for it — by ALPN "h2" over TLS, or with prior knowledge (the
// h2c preface) on a plain connection — runs http/h2_connection.h on the
// same Handler; everything else is HTTP/1.1: keep-alive,
// sized and chunked request bodies read by http::RequestReader with its
// limits (400, 413 and 431 answered for the client), HEAD, bodies written
// from memory or streamed from a BodyReader, and the client timeout on
// every wait for a request and every write of an answer (nginx's
// client_header_timeout and send_timeout). Used by the cache's front end
// and the volume daemon's control API. Beast and Asio stay in server.cc.
//
// A request goes to Handler::HandleInline on the connection's event loop
// first (an answer that needs no waiting, such as a hit in memory), else
// to Handler::Handle on one of the server's worker threads. A handler may
// take an HTTP/1.1 request's body as it arrives (Handler::StreamBody): Handle
// then runs as soon as the header is whole and reads ServerRequest::stream
// while the event loop feeds it. "Expect: 100-continue" is answered when
// the body is about to be read (for a streamed body, at the handler's
// first read, so a request refused from its header never sends one).

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "http/h2_limits.h"
#include "http/headers.h"
#include "http/request_reader.h"
#include "http/server_request.h"
#include "net/server_options.h"

namespace ferry::net {
struct ServerStats;
}

namespace ferry::http {

// A body produced while it is sent. Read and Cancel are called from worker
// threads, one call at a time.
class BodyReader {
 public:
  virtual ~BodyReader() = default;
  // The next bytes, at most `max`, waiting until there are some; "" at the
  // end; an error when the body ended short (the connection is then cut,
  // so the client never takes a short body as whole).
  virtual Result<std::string> Read(size_t max) = 0;
  // The client went away before the end.
  virtual void Cancel() = 0;
};

struct ServerResponse {
  int status = 200;
  Headers headers;        // without Content-Length (the server sets it)
  std::string_view body;  // empty for HEAD, 304 and 416; valid while `keep` lives
  std::shared_ptr<const void> keep;
  // For HEAD: the Content-Length a GET would have carried (or, with
  // head_chunked, that a GET would have been chunked).
  std::optional<uint64_t> head_length;
  bool head_chunked = false;
  // A body too large to hold: read from here after `body` (which is then
  // empty), as Content-Length stream_length, or chunked when unknown.
  std::shared_ptr<BodyReader> stream;
  std::optional<uint64_t> stream_length;

  void SetBody(std::string b) {
    auto owned = std::make_shared<const std::string>(std::move(b));
    body = *owned;
    keep = std::move(owned);
  }
};

class Handler {
 public:
  virtual ~Handler() = default;
  // On the event loop, so it must not wait: an answer, or nullopt to have
  // Handle called on a worker.
  virtual std::optional<ServerResponse> HandleInline(const ServerRequest& req) {
    return std::nullopt;
  }
  // On a worker thread; may block.
  virtual ServerResponse Handle(const ServerRequest& req) = 0;
  // On the event loop, with the header of a request that has a body:
  // whether Handle takes that body as it arrives (ServerRequest::stream,
  // bounded by limits.streamed_body_limit) instead of whole in
  // ServerRequest::body (bounded by limits.body_limit). A handler that
  // answers without reading the whole stream has the connection closed
  // after its answer.
  virtual bool StreamBody(const ServerRequest& head) { return false; }
};

struct ServerOptions {
  net::ServerOptions net;
  RequestLimits limits;
  // Bounds the wait for a whole request (and for the next one on a
  // kept-alive connection) and each wait for the client to take more of an
  // answer; a client past it is disconnected.
  std::chrono::milliseconds client_timeout{60'000};
  // HTTP/2 beside HTTP/1.1 (ALPN offers "h2" first over TLS); its bounds
  // (http/h2_limits.h), whose header_limit and body_limit are `limits`'.
  bool http2 = true;
  H2Limits h2;
};

class Server {
 public:
  // `handler` must outlive the server.
  Server(ServerOptions options, Handler* handler);
  ~Server();  // Stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  Status Start();
  uint16_t port() const;
  std::string address() const;
  // Of net.tls_listen (0 and "" without one).
  uint16_t tls_port() const;
  std::string tls_address() const;
  // net::Server::ReloadTls: new handshakes take the certificates as the
  // files now are; on failure the old ones stay.
  Status ReloadTls();
  net::ServerStats stats() const;
  // Graceful (net::Server::Stop): answers in progress are finished.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ferry::http
