// The accept loop and the server's life: listen, TLS set-up, signals.
// Each connection is served by serve.h (Boost.Beast, in its own files).

#include <utility>  // before Boost.Asio under g++ 12

#include "server.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include "serve.h"
#include "tls_cert.h"

namespace ferry::s3server {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using Ec = boost::system::error_code;

auto Token(Ec& ec) { return net::redirect_error(net::use_awaitable, ec); }

net::awaitable<void> AcceptLoop(tcp::acceptor& acceptor, net::io_context& ioc,
                                net::ssl::context* tls, Service& service,
                                const ServerOptions& options) {
  net::steady_timer backoff(ioc);
  for (;;) {
    Ec ec;
    net::any_io_executor strand = net::make_strand(ioc);
    tcp::socket socket = co_await acceptor.async_accept(strand, Token(ec));
    if (ec == net::error::operation_aborted || !acceptor.is_open()) co_return;
    if (ec) {
      // EMFILE and friends: wait for connections to close instead of spinning.
      spdlog::warn("accept: {}", ec.message());
      backoff.expires_after(std::chrono::milliseconds(50));
      co_await backoff.async_wait(Token(ec));
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    auto ex = socket.get_executor();
    if (tls) {
      net::co_spawn(ex, ServeTls(std::move(socket), *tls, service, options), net::detached);
    } else {
      net::co_spawn(ex, ServePlain(std::move(socket), service, options), net::detached);
    }
  }
}

Status WriteFileAtomic(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out.flush()) return Status::IoError("write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Status::FromErrno(errno, "rename " + tmp);
  return Status::Ok();
}

}  // namespace

Status RunServer(const ServerOptions& options, Service& service) {
  size_t colon = options.listen.rfind(':');
  if (colon == std::string::npos) return Status::InvalidArgument("--listen wants HOST:PORT");
  std::string host = options.listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "localhost") host = "127.0.0.1";
  int port = std::atoi(options.listen.c_str() + colon + 1);
  Ec ec;
  net::ip::address address = net::ip::make_address(host, ec);
  if (ec || port < 0 || port > 65535) {
    return Status::InvalidArgument("bad --listen address " + options.listen);
  }
  if (!address.is_loopback() && !options.allow_remote) {
    return Status::InvalidArgument("refusing to listen on non-loopback " + host +
                                   " without --allow-remote");
  }

  net::io_context ioc(std::max(1, options.threads));
  tcp::acceptor acceptor(ioc);
  tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(4096, ec);
  if (ec) return Status::Network("listen on " + options.listen + ": " + ec.message());
  int bound = acceptor.local_endpoint().port();

  std::unique_ptr<net::ssl::context> tls;
  if (options.tls) {
    FERRY_ASSIGN_OR_RETURN(
        SelfSignedCert cert,
        GenerateSelfSignedCert("DNS:localhost,DNS:*.localhost,IP:127.0.0.1,IP:::1"));
    if (!options.cert_out.empty()) FERRY_RETURN_IF_ERROR(WriteFileAtomic(options.cert_out, cert.cert_pem));
    tls = std::make_unique<net::ssl::context>(net::ssl::context::tls_server);
    tls->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                     net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                     net::ssl::context::no_tlsv1_1);
    tls->use_certificate_chain(net::buffer(cert.cert_pem), ec);
    if (!ec) tls->use_private_key(net::buffer(cert.key_pem), net::ssl::context::pem, ec);
    if (ec) return Status::Internal("TLS setup: " + ec.message());
  }
  if (!options.port_file.empty()) {
    FERRY_RETURN_IF_ERROR(WriteFileAtomic(options.port_file, std::to_string(bound) + "\n"));
  }
  std::string shown = address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
  std::printf("listening on %s://%s:%d\n", tls ? "https" : "http", shown.c_str(), bound);
  std::fflush(stdout);

  net::co_spawn(ioc, AcceptLoop(acceptor, ioc, tls.get(), service, options), net::detached);
  net::signal_set signals(ioc, SIGINT, SIGTERM);
  signals.async_wait([&](const Ec&, int sig) {
    spdlog::info("signal {}: shutting down", sig);
    Ec ignored;
    acceptor.close(ignored);
    ioc.stop();
  });

  std::vector<std::thread> threads;
  for (int i = 1; i < options.threads; ++i) threads.emplace_back([&ioc] { ioc.run(); });
  ioc.run();
  for (auto& t : threads) t.join();
  return Status::Ok();
}

}  // namespace ferry::s3server
