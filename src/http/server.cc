// The only http file that runs Beast's serializer on a server connection.
#include "http/server.h"

#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <utility>  // before Boost.Asio under g++ 12

#include "http/h2_connection.h"
#include "http/request_body.h"
#include "net/server.h"

namespace ferry::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using Ec = beast::error_code;

bool NoBody(int status) {
  return status == 304 || status == 204 || (status >= 100 && status < 200);
}

std::string_view View(const beast::flat_buffer& b) {
  auto data = b.data();
  return std::string_view(static_cast<const char*>(data.data()), data.size());
}

ServerResponse InternalError() {
  ServerResponse r;
  r.status = 500;
  r.SetBody("internal error\n");
  return r;
}

// Until the timer is cancelled (or its wait is otherwise woken).
asio::awaitable<void> Sleep(asio::steady_timer& t) {
  t.expires_at(asio::steady_timer::time_point::max());
  Ec ec;
  co_await t.async_wait(net::AwaitInto(ec));
}

}  // namespace

// The ALPN protocols offered over TLS and the HTTP/2 bounds, from the options.
ServerOptions Prepared(ServerOptions o) {
  if (o.net.tls.alpn.empty()) {
    o.net.tls.alpn =
        o.http2 ? std::vector<std::string>{"h2", "http/1.1"} : std::vector<std::string>{"http/1.1"};
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

  asio::awaitable<void> WriteResponse(net::Connection& c, const ServerResponse& r, bool keep_alive,
                                      Ec& ec) {
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
  asio::awaitable<void> ReadRequest(net::Connection& c, beast::flat_buffer& buffer,
                                    RequestReader& reader, bool fresh = true) {
    Ec ec;
    c.SetIdle(fresh && buffer.size() == 0);
    c.Arm(options.client_timeout);
    for (;;) {
      if (buffer.size() > 0) {
        auto data = buffer.data();
        buffer.consume(
            reader.Feed(std::string_view(static_cast<const char*>(data.data()), data.size())));
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

  asio::awaitable<void> WriteContinue(net::Connection& c, Ec& ec) {
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    c.Arm(options.client_timeout);
    co_await asio::async_write(c, asio::buffer(kContinue.data(), kContinue.size()),
                               net::AwaitInto(ec));
    c.Disarm();
  }

  struct Outcome {
    std::optional<ServerResponse> response;
  };

  // Feeds `body` from the socket (and what `buffer` holds) while the
  // handler runs, until the body ends, breaks, or the handler is done with
  // it. Reads wait for room in `body` and, when the client expects "100
  // Continue", for the handler's first read; each socket read is bounded by
  // the client timeout.
  asio::awaitable<void> PumpBody(net::Connection& c, beast::flat_buffer& buffer,
                                 RequestReader& reader, RequestBody& body, asio::steady_timer& wake,
                                 const Outcome& out, bool expects_continue) {
    bool continued = !expects_continue || buffer.size() > 0;
    bool need_socket = buffer.size() == 0;
    std::string piece;
    while (!out.response && !body.abandoned() &&
           reader.state() == RequestReader::State::kNeedMore) {
      if (body.MustWait(!continued)) {
        co_await Sleep(wake);
        continue;
      }
      Ec ec;
      if (!continued) {
        continued = true;
        co_await WriteContinue(c, ec);
        if (ec) break;
      }
      if (!need_socket) {
        piece.clear();
        const size_t used = reader.FeedBody(View(buffer), &piece);
        buffer.consume(used);
        body.Push(piece);
        need_socket = buffer.size() == 0 || (used == 0 && piece.empty());
        if (used == 0 && piece.empty() && buffer.size() > options.limits.header_limit) {
          break;  // a chunk line or trailer section that never ends
        }
        continue;
      }
      c.Arm(options.client_timeout);
      size_t n = co_await c.async_read_some(buffer.prepare(64 << 10), net::AwaitInto(ec));
      c.Disarm();
      buffer.commit(n);
      need_socket = n == 0;
      if (ec) {
        reader.FeedEof();
        break;
      }
    }
    if (reader.state() == RequestReader::State::kDone) {
      body.Finish();
    } else if (reader.error() == RequestReader::Error::kBodyTooLarge) {
      body.Fail(Status::InvalidArgument(
          "request body over " + std::to_string(options.limits.streamed_body_limit) + " bytes"));
    } else {
      body.Fail(Status::Corruption("request body cut short: " +
                                   (reader.state() == RequestReader::State::kError
                                        ? reader.error_message()
                                        : std::string("not read"))));
    }
  }

  // Runs the handler on a worker while this loop reads the body it takes as
  // it arrives; then answers. Whether the connection may serve another
  // request (only when the body was read to its end).
  asio::awaitable<bool> ServeStreamed(net::Connection& c, beast::flat_buffer& buffer,
                                      RequestReader& reader, ServerRequest head) {
    auto wake = std::make_shared<asio::steady_timer>(c.get_executor());
    auto& loop =
        static_cast<asio::io_context&>(asio::query(c.get_executor(), asio::execution::context));
    auto body = std::make_shared<RequestBody>(
        reader.content_length(), options.limits.stream_buffer,
        [ex = c.get_executor(), wake] { asio::post(ex, [wake] { wake->cancel(); }); },
        [&loop] { return !loop.stopped(); });
    // However this coroutine ends (a stop that destroys it included), a
    // handler still reading is never left waiting.
    struct FailOnExit {
      std::shared_ptr<RequestBody> body;
      ~FailOnExit() {
        if (!body->ended()) body->Fail(Status::Cancelled("the connection closed mid-body"));
      }
    } fail_on_exit{body};
    const bool expects_continue = reader.expects_continue();
    reader.ReadStreamed(options.limits.streamed_body_limit);
    if (reader.state() == RequestReader::State::kError) {  // over the limit: unread
      co_await AnswerError(c, reader);
      co_return false;
    }
    head.stream = body;
    auto out = std::make_shared<Outcome>();
    auto run =
        [this, out, wake,
         req = std::make_shared<const ServerRequest>(std::move(head))]() -> asio::awaitable<void> {
      Handler* h = handler;
      auto handle = [h, req] { return h->Handle(*req); };
      try {
        out->response = co_await server.Blocking(handle);
      } catch (const std::exception&) {
        out->response = InternalError();
      }
      wake->cancel();
    };
    asio::co_spawn(c.get_executor(), run, asio::detached);
    co_await PumpBody(c, buffer, reader, *body, *wake, *out, expects_continue);
    while (!out->response) co_await Sleep(*wake);
    const bool whole = reader.state() == RequestReader::State::kDone;
    if (!whole) body->Abandon();
    const bool keep_alive = whole && reader.keep_alive() && !c.draining();
    Ec ec;
    co_await WriteResponse(c, *out->response, keep_alive, ec);
    co_return keep_alive && !ec;
  }

  asio::awaitable<void> AnswerError(net::Connection& c, const RequestReader& reader) {
    switch (reader.error()) {
      case RequestReader::Error::kHeaderTooLarge:
        co_await WriteSimple(c, bhttp::status::request_header_fields_too_large,
                             reader.error_message());
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
      reader.PauseAtHeader();
      co_await ReadRequest(c, buffer, reader);
      if (c.expired()) break;
      if (reader.state() == RequestReader::State::kHeader) {
        ServerRequest head = reader.Head();
        head.peer = c.peer();
        head.tls = c.tls();
        if (handler->StreamBody(head)) {
          if (!co_await ServeStreamed(c, buffer, reader, std::move(head))) break;
          continue;
        }
        reader.ReadWhole();
        if (reader.state() == RequestReader::State::kNeedMore && reader.expects_continue() &&
            buffer.size() == 0) {
          Ec ec;
          co_await WriteContinue(c, ec);
          if (ec) break;
        }
        co_await ReadRequest(c, buffer, reader, false);
        if (c.expired()) break;
      }
      if (reader.state() == RequestReader::State::kError) {
        co_await AnswerError(c, reader);
        break;
      }
      if (reader.state() != RequestReader::State::kDone) break;
      ServerRequest req = reader.TakeRequest();
      req.peer = c.peer();
      req.tls = c.tls();
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
