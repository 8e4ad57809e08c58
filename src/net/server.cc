#include "net/server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/context.hpp>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "base/atomic_file.h"
#include "net/listen_address.h"

namespace ferry::net {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using unix_socket = asio::local::stream_protocol;
using Ec = boost::system::error_code;

namespace {

auto Token(Ec& ec) { return asio::redirect_error(asio::use_awaitable, ec); }

// A socket file left by a server that died is removed; one a live server
// answers on is "in use".
Status ClearStaleSocket(const std::string& path, const std::string& flag) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return Status::Ok();
  if (!S_ISSOCK(st.st_mode)) {
    return Status::AlreadyExists(flag + " unix:" + path + ": exists and is not a socket");
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::FromErrno(errno, flag + " unix:" + path);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  path.copy(sa.sun_path, sizeof(sa.sun_path) - 1);
  int rc = connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof(sa));
  int err = errno;
  close(fd);
  if (rc == 0) return Status::AlreadyExists(flag + " unix:" + path + ": a server is listening there");
  if (err != ECONNREFUSED) return Status::FromErrno(err, flag + " unix:" + path);
  if (unlink(path.c_str()) != 0) return Status::FromErrno(errno, flag + " unix:" + path);
  return Status::Ok();
}

}  // namespace

struct Server::Impl {
  ServerOptions options;
  Session session;
  ListenAddress address;
  uint16_t port = 0;
  std::optional<asio::ssl::context> tls;

  mutable std::mutex mu;
  std::condition_variable changed;
  std::map<uint64_t, std::weak_ptr<Connection>> live;  // guarded by mu
  uint64_t next_id = 0;                                 // guarded by mu
  ServerStats stats;                                    // guarded by mu
  bool stopping = false;                                // guarded by mu
  bool started = false;
  bool stopped = false;

  std::vector<std::thread> threads;
  // Destroyed before what sessions use above (their frames die with the
  // loops), after the pool their blocking calls run on.
  asio::thread_pool workers;
  std::vector<std::unique_ptr<asio::io_context>> loops;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
  std::optional<tcp::acceptor> tcp_acceptor;
  std::optional<unix_socket::acceptor> unix_acceptor;

  Impl(ServerOptions o, Session s)
      : options(std::move(o)),
        session(std::move(s)),
        workers(static_cast<size_t>(std::max(1, options.worker_threads))) {
    for (int i = 0; i < std::max(1, options.io_threads); ++i) {
      loops.push_back(std::make_unique<asio::io_context>(1));
    }
  }

  Status Error(const std::string& why) const {
    return Status::InvalidArgument(options.flag + " " + options.listen + ": " + why);
  }

  Status SetUpTls() {
    if (!options.tls.enabled()) return Status::Ok();
    if (options.tls.cert_file.empty() || options.tls.key_file.empty()) {
      return Status::InvalidArgument("TLS needs both a certificate and a key file");
    }
    tls.emplace(asio::ssl::context::tls_server);
    Ec ec;
    tls->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                         asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                         asio::ssl::context::no_tlsv1_1 | asio::ssl::context::single_dh_use,
                     ec);
    tls->use_certificate_chain_file(options.tls.cert_file, ec);
    if (ec) return Status::InvalidArgument("TLS certificate " + options.tls.cert_file + ": " + ec.message());
    tls->use_private_key_file(options.tls.key_file, asio::ssl::context::pem, ec);
    if (ec) return Status::InvalidArgument("TLS key " + options.tls.key_file + ": " + ec.message());
    if (SSL_CTX_check_private_key(tls->native_handle()) != 1) {
      return Status::InvalidArgument("TLS key " + options.tls.key_file + " does not match the certificate");
    }
    if (!options.tls.ca_file.empty()) {
      tls->load_verify_file(options.tls.ca_file, ec);
      if (ec) return Status::InvalidArgument("TLS CA " + options.tls.ca_file + ": " + ec.message());
      tls->set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert);
    }
    return Status::Ok();
  }

  template <class Acceptor, class Endpoint>
  Status Bind(Acceptor& acceptor, const Endpoint& ep) {
    Ec ec;
    acceptor.open(ep.protocol(), ec);
    if constexpr (std::is_same_v<Acceptor, tcp::acceptor>) {
      if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    }
    if (!ec) acceptor.bind(ep, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return Error(ec.message());
    return Status::Ok();
  }

  Status Listen() {
    if (address.is_unix()) {
      FERRY_RETURN_IF_ERROR(ClearStaleSocket(address.path, options.flag));
      unix_acceptor.emplace(*loops[0]);
      return Bind(*unix_acceptor, unix_socket::endpoint(address.path));
    }
    Ec ec;
    auto ip = asio::ip::make_address(address.host, ec);
    if (ec) return Error("not an IP address");
    tcp_acceptor.emplace(*loops[0]);
    FERRY_RETURN_IF_ERROR(Bind(*tcp_acceptor, tcp::endpoint(ip, address.port)));
    port = tcp_acceptor->local_endpoint().port();
    return Status::Ok();
  }

  // Registers a session; false when over the limit or stopping.
  std::optional<uint64_t> Admit() {
    std::lock_guard lock(mu);
    if (stopping || stats.open >= options.max_connections) {
      ++stats.rejected;
      return std::nullopt;
    }
    ++stats.accepted;
    ++stats.open;
    return next_id++;
  }

  void Leave(uint64_t id) {
    std::lock_guard lock(mu);
    live.erase(id);
    --stats.open;
    changed.notify_all();
  }

  // The server's side of a TLS handshake, under handshake_timeout.
  asio::awaitable<bool> Handshake(Connection& c) {
    Ec ec;
    c.Arm(options.handshake_timeout);
    co_await c.tls_stream().async_handshake(asio::ssl::stream_base::server, Token(ec));
    c.Disarm();
    if (ec) spdlog::debug("{}: TLS handshake with {} failed: {}", options.flag, c.peer(), ec.message());
    co_return !ec;
  }

  static asio::awaitable<void> Run(Impl* self, uint64_t id, std::shared_ptr<Connection> c) {
    {
      std::lock_guard lock(self->mu);
      self->live[id] = c;
      if (self->stopping) c->Drain();
    }
    bool ready = true;
    if (c->tls()) ready = co_await self->Handshake(*c);
    if (ready) co_await self->session(*c);
    c->ShutdownSend();
    c->Close();
    self->Leave(id);
  }

  template <class Socket>
  void Launch(Socket socket) {
    auto id = Admit();
    if (!id) {
      Ec ignored;
      socket.close(ignored);
      return;
    }
    std::shared_ptr<Connection> c;
    if constexpr (std::is_same_v<typename Socket::protocol_type, tcp>) {
      if (tls && !options.tls.in_band) {
        c = std::make_shared<Connection>(Connection::Tls(std::move(socket), *tls));
      } else {
        c = std::make_shared<Connection>(std::move(socket));
      }
    } else {
      c = std::make_shared<Connection>(std::move(socket));
    }
    auto ex = c->get_executor();
    asio::co_spawn(ex, Run(this, *id, std::move(c)), asio::detached);
  }

  template <class Acceptor>
  static asio::awaitable<void> Accept(Impl* self, Acceptor* acceptor) {
    size_t next = 0;
    for (;;) {
      Ec ec;
      asio::io_context& loop = *self->loops[next++ % self->loops.size()];
      auto socket = co_await acceptor->async_accept(loop, Token(ec));
      if (ec == asio::error::operation_aborted || !acceptor->is_open()) co_return;
      if (ec) {
        // Out of descriptors, say: do not spin.
        asio::steady_timer pause(co_await asio::this_coro::executor, std::chrono::milliseconds(50));
        co_await pause.async_wait(Token(ec));
        continue;
      }
      self->Launch(std::move(socket));
    }
  }

  void CloseAcceptor() {
    Ec ignored;
    if (tcp_acceptor) tcp_acceptor->close(ignored);
    if (unix_acceptor) unix_acceptor->close(ignored);
  }

  // Runs `f` on each live connection's loop.
  template <class F>
  void ForEachLive(F f) {
    std::lock_guard lock(mu);
    for (auto& [id, weak] : live) {
      if (auto c = weak.lock()) asio::post(c->get_executor(), [c, f] { f(*c); });
    }
  }

  bool WaitClosed(std::chrono::milliseconds d) {
    std::unique_lock lock(mu);
    return changed.wait_for(lock, d, [&] { return stats.open == 0; });
  }
};

Server::Server(ServerOptions options, Session session)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(session))) {}

Server::~Server() { Stop(); }

asio::thread_pool& Server::workers() { return impl_->workers; }

bool Server::tls_configured() const { return impl_->tls.has_value(); }

asio::awaitable<bool> Server::StartTls(Connection& c) {
  if (!impl_->tls || c.tls() || !c.StartTls(*impl_->tls)) co_return false;
  const bool done = co_await impl_->Handshake(c);  // named: g++ 12 miscompiles `co_return co_await`
  co_return done;
}

Status Server::Start() {
  Impl& s = *impl_;
  auto address = ParseListenAddress(s.options.listen);
  if (!address.ok()) return Status::InvalidArgument(s.options.flag + ": " + address.status().message());
  s.address = *address;
  FERRY_RETURN_IF_ERROR(s.SetUpTls());
  FERRY_RETURN_IF_ERROR(s.Listen());
  if (!s.options.port_file.empty()) {
    FERRY_RETURN_IF_ERROR(WriteFileAtomic(s.options.port_file, std::to_string(s.port) + "\n"));
  }
  if (s.tcp_acceptor) asio::co_spawn(*s.loops[0], Impl::Accept(&s, &*s.tcp_acceptor), asio::detached);
  if (s.unix_acceptor) asio::co_spawn(*s.loops[0], Impl::Accept(&s, &*s.unix_acceptor), asio::detached);
  for (auto& loop : s.loops) {
    s.guards.push_back(asio::make_work_guard(*loop));
    s.threads.emplace_back([l = loop.get()] { l->run(); });
  }
  s.started = true;
  return Status::Ok();
}

uint16_t Server::port() const { return impl_->port; }

std::string Server::address() const {
  ListenAddress a = impl_->address;
  a.port = impl_->port;
  return a.ToString();
}

ServerStats Server::stats() const {
  std::lock_guard lock(impl_->mu);
  return impl_->stats;
}

void Server::Stop() {
  Impl& s = *impl_;
  if (s.stopped) return;
  s.stopped = true;
  if (s.started) {
    asio::post(*s.loops[0], [&s] { s.CloseAcceptor(); });
    {
      std::lock_guard lock(s.mu);
      s.stopping = true;
    }
    s.ForEachLive([](Connection& c) { c.Drain(); });
    if (!s.WaitClosed(s.options.drain_timeout)) {
      s.ForEachLive([](Connection& c) { c.Close(); });
      // A session in a blocking call ends when the call returns; past this
      // its frame is dropped with its loop.
      s.WaitClosed(std::chrono::milliseconds(1000));
    }
    s.guards.clear();
    for (auto& loop : s.loops) loop->stop();
    for (auto& t : s.threads) t.join();
  }
  s.workers.join();
  if (s.started && s.address.is_unix()) unlink(s.address.path.c_str());
}

}  // namespace ferry::net
