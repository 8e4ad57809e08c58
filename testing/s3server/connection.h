#pragma once
// One connection's HTTP/1.1 exchanges (keep-alive, paced bodies, injected
// faults) over a plain or a TLS stream: the test server's Boost.Beast code.
// Included only by serve_plain.cc and serve_tls.cc, which instantiate it
// once each, so the two costliest compiles of the test server run side by
// side.

#include <utility>  // before Boost.Asio under g++ 12

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <spdlog/spdlog.h>

#include "exchange.h"
#include "pacer.h"
#include "server.h"
#include "time_format.h"

namespace ferry::s3server::connection_detail {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

constexpr size_t kMaxChunk = 256 * 1024;
constexpr auto kTlsHandshakeTimeout = std::chrono::seconds(30);
constexpr auto kTlsShutdownTimeout = std::chrono::seconds(5);

inline auto Token(beast::error_code& ec) { return net::redirect_error(net::use_awaitable, ec); }

inline HttpRequest ToRequest(const http::request<http::buffer_body>& r) {
  HttpRequest out;
  out.method = std::string(r.method_string());
  out.target = std::string(r.target());
  for (const auto& field : r) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    out.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  return out;
}

// Serves one connection. Stream is beast::tcp_stream or
// beast::ssl_stream<beast::tcp_stream>.
template <class Stream>
class Connection {
 public:
  Connection(Stream stream, Service& service, const ServerOptions& options)
      : stream_(std::move(stream)),
        service_(service),
        options_(options),
        timer_(stream_.get_executor()),
        chunk_(kMaxChunk, '\0') {}

  net::awaitable<void> Run() {
    service_.counters().ConnectionOpened();
    try {
      if (co_await Handshake()) {
        while (co_await ServeOne()) {
        }
      }
    } catch (const std::exception& e) {
      spdlog::warn("connection error: {}", e.what());
    }
    beast::error_code ec;
    Lowest().socket().close(ec);
    service_.counters().ConnectionClosed();
  }

 private:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }

  net::awaitable<bool> Handshake() {
    if constexpr (kTls) {
      beast::error_code ec;
      Lowest().expires_after(kTlsHandshakeTimeout);
      co_await stream_.async_handshake(net::ssl::stream_base::server, Token(ec));
      co_return !ec;
    } else {
      co_return true;
    }
  }

  net::awaitable<void> Sleep(std::chrono::steady_clock::duration d) {
    if (d <= d.zero()) co_return;
    beast::error_code ec;
    timer_.expires_after(d);
    co_await timer_.async_wait(Token(ec));
  }

  // Applies the per-connection and aggregate bandwidth caps to `n` bytes.
  net::awaitable<void> Pace(size_t n) {
    FaultConfig cfg = service_.faults().config();
    if (cfg.bandwidth == 0 && cfg.bandwidth_total == 0) co_return;
    auto now = Pacer::Clock::now();
    auto d = std::max(pacer_.Reserve(n, cfg.bandwidth, now),
                      service_.total_pacer().Reserve(n, cfg.bandwidth_total, now));
    co_await Sleep(d);
  }

  size_t ChunkSize() {
    FaultConfig cfg = service_.faults().config();
    uint64_t rate = cfg.bandwidth;
    if (cfg.bandwidth_total != 0 && (rate == 0 || cfg.bandwidth_total < rate)) {
      rate = cfg.bandwidth_total;
    }
    return PacedChunkSize(rate, kMaxChunk);
  }

  // RST instead of FIN: SO_LINGER with a zero timeout, then close.
  void HardClose() {
    beast::error_code ec;
    Lowest().socket().set_option(net::socket_base::linger(true, 0), ec);
    Lowest().socket().close(ec);
  }

  // Ends the connection in an orderly way (TLS close_notify when `tls_notify`).
  net::awaitable<void> GracefulClose(bool tls_notify) {
    beast::error_code ec;
    if constexpr (kTls) {
      if (tls_notify) {
        Lowest().expires_after(kTlsShutdownTimeout);
        co_await stream_.async_shutdown(Token(ec));
      }
    }
    Lowest().socket().shutdown(tcp::socket::shutdown_send, ec);
  }

  // Reads one request and answers it. False ends the connection.
  net::awaitable<bool> ServeOne() {
    http::request_parser<http::buffer_body> parser;
    parser.header_limit(64 * 1024);
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    beast::error_code ec;
    Lowest().expires_after(options_.idle_timeout);
    co_await http::async_read_header(stream_, buffer_, parser, Token(ec));
    if (ec) co_return false;  // closed, idle timeout, or unparseable

    bool keep_alive = parser.get().keep_alive();
    std::optional<uint64_t> length;
    if (parser.content_length()) length = *parser.content_length();
    Exchange ex(service_, ToRequest(parser.get()), length);
    ex.Begin(std::chrono::system_clock::now());
    co_await Sleep(ex.latency());

    if (!parser.is_done()) {
      if (beast::iequals(parser.get()[http::field::expect], "100-continue")) {
        http::response<http::empty_body> cont{http::status::continue_, 11};
        Lowest().expires_after(options_.io_timeout);
        co_await http::async_write(stream_, cont, Token(ec));
        if (ec) co_return false;
      }
    }
    if (!co_await ReadBody(parser, ex)) {
      ex.MarkAbandoned();
      ex.Record(0);
      co_return false;
    }
    ex.Finish();
    HttpResponse& res = ex.response();
    if (res.delivery == Delivery::kDropConnection) {
      ex.Record(0);
      co_await GracefulClose(/*tls_notify=*/false);
      co_return false;
    }
    keep_alive = keep_alive && !res.close && res.delivery == Delivery::kNormal;
    uint64_t sent = 0;
    bool ok = co_await WriteResponse(res, keep_alive, &sent);
    ex.Record(sent);
    if (options_.verbose) {
      spdlog::info("{} {} -> {} {} ({} out)", ex.request().method, ex.request().target,
                   res.status, ex.op_name(), sent);
    }
    if (ok && !keep_alive) co_await GracefulClose(/*tls_notify=*/true);
    co_return ok && keep_alive;
  }

  // Reads the request body into `ex`, paced. A Content-Length body is read
  // straight from the stream in chunks of up to kMaxChunk (Beast's parser
  // reads 64 KiB at a time, which costs a syscall round per 64 KiB); chunked
  // transfer-encoding goes through the parser.
  net::awaitable<bool> ReadBody(http::request_parser<http::buffer_body>& parser, Exchange& ex) {
    std::optional<uint64_t> reset_after = ex.reset_after_body_bytes();
    uint64_t received = 0;
    beast::error_code ec;
    auto limit = [&](size_t want) {
      if (!reset_after) return want;
      return static_cast<size_t>(std::min<uint64_t>(want, *reset_after - received));
    };
    if (parser.content_length() && !parser.chunked()) {
      // After async_read_header the parser has consumed only the header;
      // any body bytes already received wait in buffer_.
      uint64_t remaining = *parser.content_length();
      while (remaining > 0 && !(reset_after && received >= *reset_after)) {
        size_t want = limit(static_cast<size_t>(std::min<uint64_t>(ChunkSize(), remaining)));
        size_t n = 0;
        if (buffer_.size() > 0) {
          n = net::buffer_copy(net::buffer(chunk_.data(), want), buffer_.data());
          buffer_.consume(n);
        } else {
          Lowest().expires_after(options_.io_timeout);
          n = co_await stream_.async_read_some(net::buffer(chunk_.data(), want), Token(ec));
          if (ec) co_return false;
        }
        remaining -= n;
        received += n;
        co_await Pace(n);
        ex.OnBody(std::string_view(chunk_.data(), n));
      }
    } else {
      while (!parser.is_done() && !(reset_after && received >= *reset_after)) {
        size_t want = limit(ChunkSize());
        parser.get().body().data = chunk_.data();
        parser.get().body().size = want;
        Lowest().expires_after(options_.io_timeout);
        co_await http::async_read(stream_, buffer_, parser, Token(ec));
        if (ec == http::error::need_buffer) ec = {};
        if (ec) co_return false;
        size_t n = want - parser.get().body().size;
        if (n == 0) continue;
        received += n;
        co_await Pace(n);
        ex.OnBody(std::string_view(chunk_.data(), n));
      }
    }
    if (reset_after && received >= *reset_after) {
      HardClose();
      co_return false;
    }
    co_return true;
  }

  // Sends `res` (header, then the body in paced chunks). Applies the
  // reset/truncate deliveries. False when the connection is finished.
  net::awaitable<bool> WriteResponse(const HttpResponse& res, bool keep_alive, uint64_t* sent) {
    http::response<http::empty_body> msg{static_cast<http::status>(res.status), 11};
    for (const auto& [name, value] : res.headers) msg.set(name, value);
    msg.set(http::field::date, HttpDate(std::chrono::system_clock::now()));
    uint64_t length = res.BodyLength();
    if (res.status != 204 && res.status != 304) {
      msg.set(http::field::content_length, std::to_string(length));
    }
    msg.keep_alive(keep_alive);

    beast::error_code ec;
    http::response_serializer<http::empty_body> sr{msg};
    Lowest().expires_after(options_.io_timeout);
    co_await http::async_write_header(stream_, sr, Token(ec));
    if (ec) co_return false;

    uint64_t limit = res.head ? 0 : length;
    if (res.delivery == Delivery::kReset || res.delivery == Delivery::kTruncate) limit /= 2;
    std::string scratch;
    for (uint64_t off = 0; off < limit;) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(ChunkSize(), limit - off));
      std::string_view piece;
      if (res.blob) {
        auto read = res.blob->ReadAt(res.blob_offset + off, want, &scratch);
        if (!read.ok()) {
          spdlog::error("reading object body: {}", read.status().ToString());
          HardClose();
          co_return false;
        }
        piece = *read;
      } else {
        piece = std::string_view(res.body).substr(static_cast<size_t>(off), want);
      }
      std::string flipped;
      if (res.delivery == Delivery::kCorrupt && off == 0 && !piece.empty()) {
        flipped.assign(piece);
        flipped[0] = static_cast<char>(flipped[0] ^ 0x01);
        piece = flipped;
      }
      co_await Pace(piece.size());
      Lowest().expires_after(options_.io_timeout);
      co_await net::async_write(stream_, net::buffer(piece.data(), piece.size()), Token(ec));
      if (ec) co_return false;
      off += piece.size();
      *sent = off;
    }
    if (res.delivery == Delivery::kReset) {
      HardClose();
      co_return false;
    }
    if (res.delivery == Delivery::kTruncate) {
      co_await GracefulClose(/*tls_notify=*/false);
      co_return false;
    }
    co_return true;
  }

  Stream stream_;
  Service& service_;
  const ServerOptions& options_;
  net::steady_timer timer_;
  beast::flat_buffer buffer_;
  Pacer pacer_;
  std::string chunk_;
};

}  // namespace ferry::s3server::connection_detail
