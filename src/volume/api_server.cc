// The only volume file that includes Boost.Asio.
#include <utility>  // before Boost.Asio under g++ 12

#include "volume/api_server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <thread>

#include "http/request_reader.h"
#include "net/socket_deadline.h"

namespace ferry::volume {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using Ec = boost::system::error_code;

namespace {

auto Token(Ec& ec) { return net::redirect_error(net::use_awaitable, ec); }

const char* Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    default: return status >= 500 ? "Internal Server Error" : "Error";
  }
}

std::string Wire(const ApiResponse& r, bool keep_alive) {
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + Reason(r.status) + "\r\n";
  out += "Content-Type: " + r.content_type + "\r\n";
  out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  out += keep_alive ? "\r\n" : "Connection: close\r\n\r\n";
  out += r.body;
  return out;
}

net::awaitable<ApiResponse> RunHandler(ApiHandler* h, std::shared_ptr<const http::ServerRequest> req) {
  co_return (*h)(*req);
}

}  // namespace

struct ApiServer::Impl {
  std::string listen;
  ApiHandler handler;
  std::chrono::milliseconds client_timeout{60'000};
  net::io_context ioc{1};
  net::thread_pool workers{4};
  tcp::acceptor acceptor{ioc};
  std::thread thread;
  uint16_t port = 0;
  bool stopped = false;

  net::awaitable<void> Session(tcp::socket s) {
    std::string buffer;
    char chunk[16 << 10];
    http::RequestLimits limits;
    limits.body_limit = 1 << 20;
    ::ferry::net::SocketDeadline deadline(s);
    for (;;) {
      http::RequestReader reader(limits);
      Ec ec;
      deadline.Arm(client_timeout);
      for (;;) {
        if (!buffer.empty()) buffer.erase(0, reader.Feed(buffer));
        if (reader.state() != http::RequestReader::State::kNeedMore) break;
        size_t n = co_await s.async_read_some(net::buffer(chunk), Token(ec));
        if (ec) {
          reader.FeedEof();
          break;
        }
        buffer.append(chunk, n);
      }
      deadline.Disarm();
      if (reader.state() != http::RequestReader::State::kDone) {
        if (!deadline.expired() && reader.error() != http::RequestReader::Error::kClosed &&
            reader.error() != http::RequestReader::Error::kNone) {
          int st = reader.error() == http::RequestReader::Error::kHeaderTooLarge ? 431
                   : reader.error() == http::RequestReader::Error::kBodyTooLarge ? 413
                                                                                 : 400;
          ApiResponse r{st, "text/plain", reader.error_message() + "\n"};
          deadline.Arm(client_timeout);
          co_await net::async_write(s, net::buffer(Wire(r, false)), Token(ec));
        }
        break;
      }
      bool keep_alive = reader.keep_alive();
      auto req = std::make_shared<const http::ServerRequest>(reader.TakeRequest());
      ApiResponse r = co_await net::co_spawn(workers, RunHandler(&handler, req), net::use_awaitable);
      deadline.Arm(client_timeout);
      co_await net::async_write(s, net::buffer(Wire(r, keep_alive)), Token(ec));
      deadline.Disarm();
      if (ec || !keep_alive) break;
    }
    Ec ignored;
    s.shutdown(tcp::socket::shutdown_both, ignored);
  }

  net::awaitable<void> Accept() {
    for (;;) {
      Ec ec;
      tcp::socket s = co_await acceptor.async_accept(Token(ec));
      if (ec == net::error::operation_aborted || !acceptor.is_open()) co_return;
      if (ec) continue;
      net::co_spawn(ioc, Session(std::move(s)), net::detached);
    }
  }
};

ApiServer::ApiServer(std::string listen, ApiHandler handler, std::chrono::milliseconds client_timeout)
    : impl_(std::make_unique<Impl>()) {
  impl_->listen = std::move(listen);
  impl_->handler = std::move(handler);
  impl_->client_timeout = client_timeout;
}

ApiServer::~ApiServer() { Stop(); }

Status ApiServer::Start() {
  const std::string& listen = impl_->listen;
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return Status::InvalidArgument("--api " + listen + ": expected HOST:PORT");
  std::string host = listen.substr(0, colon);
  if (host.size() > 1 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  Ec ec;
  auto addr = net::ip::make_address(host, ec);
  if (ec) return Status::InvalidArgument("--api " + listen + ": not an IP address");
  int port = -1;
  try {
    port = std::stoi(listen.substr(colon + 1));
  } catch (...) {
  }
  if (port < 0 || port > 65535) return Status::InvalidArgument("--api " + listen + ": bad port");
  tcp::endpoint ep(addr, static_cast<uint16_t>(port));
  impl_->acceptor.open(ep.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(ep, ec);
  if (!ec) impl_->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return Status::InvalidArgument("--api " + listen + ": " + ec.message());
  impl_->port = impl_->acceptor.local_endpoint().port();
  net::co_spawn(impl_->ioc, impl_->Accept(), net::detached);
  impl_->thread = std::thread([this] { impl_->ioc.run(); });
  return Status::Ok();
}

uint16_t ApiServer::port() const { return impl_->port; }

void ApiServer::Stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->ioc.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_->workers.join();
}

}  // namespace ferry::volume
