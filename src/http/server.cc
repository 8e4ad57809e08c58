// The only http file that runs Beast's serializer on a server connection.
#include <utility>  // before Boost.Asio under g++ 12

#include "http/server.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "http/h2_connection.h"
#include "net/server.h"

namespace ferry::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using Ec = beast::error_code;

bool NoBody(int status) { return status == 304 || status == 204 || (status >= 100 && status < 200); }

}  // namespace

// The ALPN protocols offered over TLS and the HTTP/2 bounds, from the options.
ServerOptions Prepared(ServerOptions o) {
  if (o.net.tls.alpn.empty()) {
    o.net.tls.alpn = o.http2 ? std::vector<std::string>{"h2", "http/1.1"} : std::vector<std::string>{"http/1.1"};
  }
  o.h2.header_limit = o.limits.header_limit;
  o.h2.body_limit = o.limits.body_limit;
  return o;
}

struct Server::Impl {
  ServerOptions options;
  Handler* handler;
  net::Server server;
  H2Config h2;

  Impl(ServerOptions o, Handler* h)
      : options(Prepared(std::move(o))),
        handler(h),
        server(options.net, [this](net::Connection& c) { return Session(c); }),
        h2{handler, &server, options.client_timeout, options.h2} {}

  asio::awaitable<void> WriteSimple(net::Connection& c, bhttp::status st, std::string text) {
    bhttp::response<bhttp::string_body> res{st, 11};
    res.set(bhttp::field::content_type, "text/plain; charset=utf-8");
    res.set(bhttp::field::connection, "close");
    res.body() = std::move(text) + "\n";
    res.prepare_payload();
    Ec ec;
    c.Arm(options.client_timeout);
    co_await bhttp::async_write(c, res, net::AwaitInto(ec));
    c.Disarm();
  }

  // The next piece of a streamed body, read on a worker ("" at the end).
  struct Piece {
    Status status;
    std::string data;
  };
  asio::awaitable<Piece> ReadPiece(const std::shared_ptr<BodyReader>& body) {
    auto read = [body]() -> Piece {
      auto r = body->Read(256 << 10);
      if (!r.ok()) return Piece{r.status(), ""};
      return Piece{Status::Ok(), std::move(r).value()};
    };
    co_return co_await server.Blocking(read);
  }

  // Writes each piece, every wait for the client to take more bounded by
  // the client timeout: a stalled reader is cut. (The kernel wakes a writer
  // only when a good part of the socket's send buffer has drained, so a
  // reader slower than about (send buffer / 2) / timeout is cut too.)
  template <class Serializer>
  asio::awaitable<void> WriteSome(net::Connection& c, Serializer& sr, Ec& ec) {
    c.Arm(options.client_timeout);
    co_await bhttp::async_write_some(c, sr, net::AwaitInto(ec));
    c.Disarm();
  }

  asio::awaitable<void> WriteStream(net::Connection& c, bhttp::response<bhttp::buffer_body>& res,
                                    bhttp::response_serializer<bhttp::buffer_body>& sr,
                                    const std::shared_ptr<BodyReader>& body, Ec& ec) {
    res.body().data = nullptr;
    res.body().more = true;
    c.Arm(options.client_timeout);
    co_await bhttp::async_write_header(c, sr, net::AwaitInto(ec));
    c.Disarm();
    while (!ec) {
      Piece piece = co_await ReadPiece(body);
      if (!piece.status.ok()) {
        ec = asio::error::connection_aborted;
        break;
      }
      res.body().data = piece.data.empty() ? nullptr : piece.data.data();
      res.body().size = piece.data.size();
      res.body().more = !piece.data.empty();
      for (;;) {
        c.Arm(options.client_timeout);
        co_await bhttp::async_write(c, sr, net::AwaitInto(ec));
        c.Disarm();
        if (ec == bhttp::error::need_buffer) {
          ec = {};
          break;
        }
        if (ec || sr.is_done()) break;
      }
      if (piece.data.empty() || sr.is_done()) break;
    }
    if (ec) {
      auto cancel = [body] { body->Cancel(); };
      co_await server.Blocking(cancel);
    }
  }

  asio::awaitable<void> WriteResponse(net::Connection& c, const ServerResponse& r, bool keep_alive, Ec& ec) {
    bhttp::response<bhttp::buffer_body> res{static_cast<bhttp::status>(r.status), 11};
    for (const auto& [k, v] : r.headers) res.insert(k, v);
    res.keep_alive(keep_alive);
    const bool no_body = NoBody(r.status);
    if (r.head_length) {
      res.content_length(*r.head_length);
    } else if (r.head_chunked) {
      res.chunked(true);
    } else if (r.stream) {
      if (r.stream_length) {
        res.content_length(*r.stream_length);
      } else {
        res.chunked(true);
      }
    } else if (!no_body) {
      res.content_length(r.body.size());
    }
    const bool head = r.head_length || r.head_chunked;
    // The body is only read from: buffer_body wants a non-const pointer.
    res.body().data = head || no_body ? nullptr : const_cast<char*>(r.body.data());
    res.body().size = head || no_body ? 0 : r.body.size();
    res.body().more = false;
    bhttp::response_serializer<bhttp::buffer_body> sr{res};
    if (head) {
      c.Arm(options.client_timeout);
      co_await bhttp::async_write_header(c, sr, net::AwaitInto(ec));
      c.Disarm();
    } else if (r.stream) {
      co_await WriteStream(c, res, sr, r.stream, ec);
    } else {
      while (!ec && !sr.is_done()) co_await WriteSome(c, sr, ec);
    }
  }

  // Reads one request into `reader`: bytes left from the last read first,
  // then more, all within one client timeout. The connection counts as
  // idle (closed at once by a stop) until its first byte.
  asio::awaitable<void> ReadRequest(net::Connection& c, beast::flat_buffer& buffer, RequestReader& reader) {
    Ec ec;
    c.SetIdle(buffer.size() == 0);
    c.Arm(options.client_timeout);
    for (;;) {
      if (buffer.size() > 0) {
        auto data = buffer.data();
        buffer.consume(reader.Feed(std::string_view(static_cast<const char*>(data.data()), data.size())));
      }
      if (reader.state() != RequestReader::State::kNeedMore) break;
      size_t n = co_await c.async_read_some(buffer.prepare(64 << 10), net::AwaitInto(ec));
      buffer.commit(n);
      if (n > 0) c.SetIdle(false);
      if (ec) {
        reader.FeedEof();
        break;
      }
    }
    c.Disarm();
    c.SetIdle(false);
  }

  asio::awaitable<void> AnswerError(net::Connection& c, const RequestReader& reader) {
    switch (reader.error()) {
      case RequestReader::Error::kHeaderTooLarge:
        co_await WriteSimple(c, bhttp::status::request_header_fields_too_large, reader.error_message());
        break;
      case RequestReader::Error::kBodyTooLarge:
        co_await WriteSimple(c, bhttp::status::payload_too_large, reader.error_message());
        break;
      case RequestReader::Error::kBadRequest:
        co_await WriteSimple(c, bhttp::status::bad_request, reader.error_message());
        break;
      default:
        break;  // closed between or mid-request: nobody to answer
    }
  }

  // Reads until the first bytes are the h2c preface or cannot be; they
  // stay in `buffer`. The connection is idle (closed at once by a stop)
  // until its first byte. kPartial: the client closed (or timed out)
  // first. Nothing may read again after an end of file: with Asio's
  // edge-triggered epoll a second read can wait for ever.
  asio::awaitable<PrefaceMatch> Sniff(net::Connection& c, beast::flat_buffer& buffer) {
    PrefaceMatch m = PrefaceMatch::kPartial;
    c.SetIdle(true);
    c.Arm(options.client_timeout);
    while (m == PrefaceMatch::kPartial) {
      Ec ec;
      size_t n = co_await c.async_read_some(buffer.prepare(64 << 10), net::AwaitInto(ec));
      buffer.commit(n);
      if (n > 0) c.SetIdle(false);
      auto data = buffer.data();
      m = MatchH2Preface(std::string_view(static_cast<const char*>(data.data()), data.size()));
      if (ec) break;
    }
    c.Disarm();
    co_return m;
  }

  asio::awaitable<void> Session(net::Connection& c) {
    if (options.http2 && c.tls() && c.alpn() == "h2") {
      co_await ServeH2(c, h2, "");
      co_return;
    }
    beast::flat_buffer buffer;
    if (options.http2 && !c.tls()) {
      const PrefaceMatch m = co_await Sniff(c, buffer);
      if (m == PrefaceMatch::kPartial) co_return;  // gone before a whole request
      if (m == PrefaceMatch::kYes) {
        auto data = buffer.data();
        std::string received(static_cast<const char*>(data.data()), data.size());
        co_await ServeH2(c, h2, std::move(received));
        co_return;
      }
    }
    while (!c.draining()) {
      RequestReader reader(options.limits);
      co_await ReadRequest(c, buffer, reader);
      if (c.expired()) break;
      if (reader.state() == RequestReader::State::kError) {
        co_await AnswerError(c, reader);
        break;
      }
      if (reader.state() != RequestReader::State::kDone) break;
      ServerRequest req = reader.TakeRequest();
      req.peer = c.peer();
      std::optional<ServerResponse> r = handler->HandleInline(req);
      if (!r) {
        Handler* h = handler;
        auto shared = std::make_shared<const ServerRequest>(std::move(req));
        auto handle = [h, shared] { return h->Handle(*shared); };
        r = co_await server.Blocking(handle);
      }
      const bool keep_alive = reader.keep_alive() && !c.draining();
      Ec ec;
      co_await WriteResponse(c, *r, keep_alive, ec);
      if (ec || !keep_alive) break;
    }
  }
};

Server::Server(ServerOptions options, Handler* handler)
    : impl_(std::make_unique<Impl>(std::move(options), handler)) {}
Server::~Server() { Stop(); }
Status Server::Start() { return impl_->server.Start(); }
uint16_t Server::port() const { return impl_->server.port(); }
std::string Server::address() const { return impl_->server.address(); }
uint16_t Server::tls_port() const { return impl_->server.tls_port(); }
std::string Server::tls_address() const { return impl_->server.tls_address(); }
Status Server::ReloadTls() { return impl_->server.ReloadTls(); }
net::ServerStats Server::stats() const { return impl_->server.stats(); }
void Server::Stop() { impl_->server.Stop(); }

}  // namespace ferry::http
