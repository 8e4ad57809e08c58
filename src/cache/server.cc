// The only cache file that includes Boost.Beast (slow to compile).
#include <utility>  // before Boost.Asio under g++ 12

#include "cache/server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>

#include <fstream>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "base/atomic_file.h"
#include "base/cancel.h"
#include "http/request_reader.h"

namespace ferry::cache {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = net::ip::tcp;

auto Token(beast::error_code& ec) { return net::redirect_error(net::use_awaitable, ec); }

struct Shared {
  const ServeOptions& options;
  Proxy& proxy;
  net::thread_pool& workers;
};

// The blocking Proxy::Handle, as a coroutine to start on a worker thread.
// (A plain function, not a capturing lambda: g++ 12 destroys a lambda's
// captures twice when the lambda itself is handed to co_spawn.)
net::awaitable<ProxyResponse> Handle(Proxy* proxy, std::shared_ptr<const ProxyRequest> req) {
  co_return proxy->Handle(*req);
}

// The next piece of a spooled body, read on a worker thread ("" at the end).
struct Piece {
  Status status;
  std::string data;
};
net::awaitable<Piece> ReadPiece(std::shared_ptr<Spool> spool) {
  auto r = spool->Read(256 << 10);
  if (!r.ok()) co_return Piece{r.status(), ""};
  co_return Piece{Status::Ok(), std::move(r).value()};
}

// Runs it there and resumes here.
net::awaitable<ProxyResponse> OnWorker(Shared& s, ProxyRequest req) {
  auto shared = std::make_shared<const ProxyRequest>(std::move(req));
  co_return co_await net::co_spawn(s.workers, Handle(&s.proxy, shared), net::use_awaitable);
}

net::awaitable<Piece> OnWorkerRead(Shared& s, const std::shared_ptr<Spool>& spool) {
  co_return co_await net::co_spawn(s.workers, ReadPiece(spool), net::use_awaitable);
}

net::awaitable<void> WriteSimple(beast::tcp_stream& stream, Shared& s, bhttp::status st, std::string text) {
  bhttp::response<bhttp::string_body> res{st, 11};
  res.set(bhttp::field::content_type, "text/plain; charset=utf-8");
  res.set(bhttp::field::connection, "close");
  res.body() = std::move(text) + "\n";
  res.prepare_payload();
  beast::error_code ec;
  stream.expires_after(s.options.client_timeout);
  co_await bhttp::async_write(stream, res, Token(ec));
}

// Writes a response, each wait for the client to take more bytes bounded by
// the client timeout (nginx's send_timeout): a stalled reader is cut. The
// kernel wakes a writer only when a good part of the socket's send buffer
// has drained, so a reader slower than about (send buffer / 2) / timeout —
// ~30 KB/s with Linux's defaults and 60 s — is cut too.
net::awaitable<void> WriteResponse(beast::tcp_stream& stream, Shared& s, const ProxyResponse& pr,
                                   bool keep_alive, beast::error_code& ec) {
  bhttp::response<bhttp::buffer_body> res{static_cast<bhttp::status>(pr.status), 11};
  for (const auto& [k, v] : pr.headers) res.insert(k, v);
  res.keep_alive(keep_alive);
  bool no_body = pr.status == 304 || pr.status == 204 || (pr.status >= 100 && pr.status < 200);
  if (pr.head_length) {
    res.content_length(*pr.head_length);
  } else if (pr.head_chunked) {
    res.chunked(true);
  } else if (pr.stream) {
    if (pr.stream_length) {
      res.content_length(*pr.stream_length);
    } else {
      res.chunked(true);
    }
  } else if (!no_body) {
    res.content_length(pr.body.size());
  }
  bool head = pr.head_length || pr.head_chunked;
  // The body is only read from: buffer_body wants a non-const pointer.
  res.body().data = head || no_body ? nullptr : const_cast<char*>(pr.body.data());
  res.body().size = head || no_body ? 0 : pr.body.size();
  res.body().more = false;
  bhttp::response_serializer<bhttp::buffer_body> sr{res};
  if (head) {
    stream.expires_after(s.options.client_timeout);
    co_await bhttp::async_write_header(stream, sr, Token(ec));
    co_return;
  }
  if (!pr.stream) {
    while (!ec && !sr.is_done()) {
      stream.expires_after(s.options.client_timeout);
      co_await bhttp::async_write_some(stream, sr, Token(ec));
    }
    co_return;
  }
  // A spooled body: read a piece on a worker (it may wait for upstream),
  // write it, again until the end. An upstream that ends short cuts the
  // connection (ec is set), so the client never takes a short body whole.
  res.body().data = nullptr;
  res.body().more = true;
  stream.expires_after(s.options.client_timeout);
  co_await bhttp::async_write_header(stream, sr, Token(ec));
  for (;;) {
    if (ec) break;
    Piece piece = co_await OnWorkerRead(s, pr.stream);
    if (!piece.status.ok()) {
      ec = net::error::connection_aborted;
      break;
    }
    res.body().data = piece.data.empty() ? nullptr : piece.data.data();
    res.body().size = piece.data.size();
    res.body().more = !piece.data.empty();
    for (;;) {
      stream.expires_after(s.options.client_timeout);
      co_await bhttp::async_write(stream, sr, Token(ec));
      if (ec == bhttp::error::need_buffer) {
        ec = {};
        break;
      }
      if (ec || sr.is_done()) break;
    }
    if (piece.data.empty() || sr.is_done()) break;
  }
  if (ec) pr.stream->Cancel();
}

net::awaitable<void> Session(tcp::socket socket, Shared& s) {
  beast::error_code ec;
  std::string peer = socket.remote_endpoint(ec).address().to_string();
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  http::RequestLimits limits;
  limits.body_limit = s.options.max_request_body;
  using State = http::RequestReader::State;
  for (;;) {
    // Read one request: bytes left from the last read first, then more,
    // all within one client timeout.
    http::RequestReader reader(limits);
    ec = {};
    stream.expires_after(s.options.client_timeout);
    for (;;) {
      if (buffer.size() > 0) {
        auto data = buffer.data();
        buffer.consume(reader.Feed(std::string_view(static_cast<const char*>(data.data()), data.size())));
      }
      if (reader.state() != State::kNeedMore) break;
      size_t n = co_await stream.async_read_some(buffer.prepare(64 << 10), Token(ec));
      buffer.commit(n);
      if (ec == net::error::eof) reader.FeedEof();
      if (ec) break;
    }
    if (reader.state() == State::kNeedMore) break;  // timed out, reset
    if (reader.state() == State::kError) {
      switch (reader.error()) {
        case http::RequestReader::Error::kHeaderTooLarge:
          co_await WriteSimple(stream, s, bhttp::status::request_header_fields_too_large, reader.error_message());
          break;
        case http::RequestReader::Error::kBodyTooLarge:
          co_await WriteSimple(stream, s, bhttp::status::payload_too_large, reader.error_message());
          break;
        case http::RequestReader::Error::kBadRequest:
          co_await WriteSimple(stream, s, bhttp::status::bad_request, reader.error_message());
          break;
        default:
          break;  // closed between or mid-request: nobody to answer
      }
      break;
    }
    ProxyRequest req = reader.TakeRequest();
    req.peer = peer;
    bool keep_alive = reader.keep_alive();
    // Fresh hits in memory are answered here; the rest on a worker.
    std::optional<ProxyResponse> pr = s.proxy.HandleFromMemory(req);
    if (!pr) pr = co_await OnWorker(s, std::move(req));
    ec = {};
    co_await WriteResponse(stream, s, *pr, keep_alive, ec);
    if (ec || !keep_alive) break;
  }
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

// One event loop per thread, each with its own connections (no strands, no
// locks between them); accepted connections go round-robin over them.
using Loops = std::vector<std::unique_ptr<net::io_context>>;

net::awaitable<void> Accept(tcp::acceptor& acceptor, Loops& loops, Shared& s) {
  size_t next = 0;
  for (;;) {
    beast::error_code ec;
    net::io_context& loop = *loops[next++ % loops.size()];
    tcp::socket socket = co_await acceptor.async_accept(loop, Token(ec));
    if (ec == net::error::operation_aborted || !acceptor.is_open()) co_return;
    if (ec) continue;
    socket.set_option(tcp::no_delay(true), ec);
    net::co_spawn(socket.get_executor(), Session(std::move(socket), s), net::detached);
  }
}

}  // namespace

Status ServeCache(const ServeOptions& o) {
  size_t colon = o.listen.rfind(':');
  if (colon == std::string::npos) return Status::InvalidArgument("--listen " + o.listen + ": expected HOST:PORT");
  std::string host = o.listen.substr(0, colon);
  if (host.size() > 1 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  beast::error_code ec;
  net::ip::address addr = net::ip::make_address(host, ec);
  if (ec) return Status::InvalidArgument("--listen " + o.listen + ": not an IP address");
  int port = 0;
  try {
    port = std::stoi(o.listen.substr(colon + 1));
  } catch (...) {
    port = -1;
  }
  if (port < 0 || port > 65535) return Status::InvalidArgument("--listen " + o.listen + ": bad port");

  FERRY_ASSIGN_OR_RETURN(auto store, DiskStore::Open(o.store));
  ProxyOptions proxy_options = o.proxy;
  if (proxy_options.spool_dir.empty()) proxy_options.spool_dir = o.store.dir + "/tmp";
  http::Client client(o.origin);
  ClientUpstream upstream(&client);
  Proxy proxy(proxy_options, store.get(), &upstream);
  Loops loops;
  for (int i = 0; i < std::max(1, o.io_threads); ++i) loops.push_back(std::make_unique<net::io_context>(1));
  net::io_context& ioc = *loops[0];
  net::thread_pool workers(static_cast<size_t>(std::max(1, o.worker_threads)));
  Shared shared{o, proxy, workers};

  tcp::acceptor acceptor(ioc);
  tcp::endpoint ep(addr, static_cast<uint16_t>(port));
  acceptor.open(ep.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(ep, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return Status::InvalidArgument("--listen " + o.listen + ": " + ec.message());
  uint16_t bound = acceptor.local_endpoint().port();
  if (!o.port_file.empty()) FERRY_RETURN_IF_ERROR(WriteFileAtomic(o.port_file, std::to_string(bound) + "\n"));
  spdlog::info("ferry cache: listening on {}:{}, cache in {}", host, bound, o.store.dir);

  net::co_spawn(ioc, Accept(acceptor, loops, shared), net::detached);
  // Stop on SIGINT/SIGTERM (the CLI turns them into a cancellation).
  net::steady_timer poll(ioc);
  std::function<void(const beast::error_code&)> check = [&](const beast::error_code&) {
    if (CancelRequested()) {
      acceptor.close();
      for (auto& loop : loops) loop->stop();
      return;
    }
    poll.expires_after(std::chrono::milliseconds(200));
    poll.async_wait(check);
  };
  check({});
  std::vector<std::thread> threads;
  // Loops other than the first have nothing to do until a connection
  // comes: keep them running.
  std::vector<net::executor_work_guard<net::io_context::executor_type>> guards;
  for (size_t i = 1; i < loops.size(); ++i) {
    guards.push_back(net::make_work_guard(*loops[i]));
    threads.emplace_back([&, i] { loops[i]->run(); });
  }
  ioc.run();
  for (auto& t : threads) t.join();
  workers.join();
  return Status::Ok();
}

}  // namespace ferry::cache
