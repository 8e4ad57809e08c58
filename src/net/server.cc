#include "net/server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/context.hpp>
#include <openssl/ssl.h>
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
#include "net/tls_context.h"

namespace ferry::net {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using unix_socket = asio::local::stream_protocol;
using Ec = boost::system::error_code;

namespace {

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

// One address the server accepts on; every connection of a `tls` one
// begins with the TLS handshake.
struct Listener {
  std::string text;  // as given
  std::string flag;
  std::string port_file;
  bool tls = false;
  ListenAddress address;
  uint16_t port = 0;
  std::optional<tcp::acceptor> tcp_acceptor;
  std::optional<unix_socket::acceptor> unix_acceptor;

  void Set(std::string t, std::string f, std::string pf, bool with_tls) {
    text = std::move(t);
    flag = std::move(f);
    port_file = std::move(pf);
    tls = with_tls;
  }
  std::string ToString() const {
    ListenAddress a = address;
    a.port = port;
    return a.ToString();
  }
};

// An asio context over a TlsContext's default SSL_CTX, for making streams
// (each SSL takes its own reference).
asio::ssl::context AsioContext(const TlsContext& t) {
  SSL_CTX_up_ref(t.handle());
  return asio::ssl::context(t.handle());
}

struct Server::Impl {
  ServerOptions options;
  Session session;
  // Replaced whole by a reload; connections hold the one they began with.
  std::shared_ptr<const TlsContext> tls;  // guarded by mu

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
  // After the loops, so destroyed before them: an acceptor deregisters
  // from its loop's reactor when it goes (destroyed after the loops, that
  // wrote into freed memory: a corrupted heap at the end of some runs).
  std::vector<Listener> listeners;  // `listen`, then `tls_listen`

  Impl(ServerOptions o, Session s)
      : options(std::move(o)),
        session(std::move(s)),
        workers(static_cast<size_t>(std::max(1, options.worker_threads))) {
    for (int i = 0; i < std::max(1, options.io_threads); ++i) {
      loops.push_back(std::make_unique<asio::io_context>(1));
    }
  }

  Status Error(const Listener& l, const std::string& why) const {
    return Status::InvalidArgument(l.flag + " " + l.text + ": " + why);
  }

  Status SetUpListeners() {
    const bool split = !options.tls_listen.empty();
    if (split && !options.tls.enabled()) {
      return Status::InvalidArgument(options.tls_flag + " needs a TLS certificate and key");
    }
    listeners.resize(split ? 2 : 1);
    listeners[0].Set(options.listen, options.flag, options.port_file,
                     !split && options.tls.enabled() && !options.tls.in_band);
    if (split) listeners[1].Set(options.tls_listen, options.tls_flag, options.tls_port_file, true);
    for (auto& l : listeners) {
      auto address = ParseListenAddress(l.text);
      if (!address.ok()) return Status::InvalidArgument(l.flag + ": " + address.status().message());
      if (split && l.tls && address->is_unix()) return Error(l, "TLS needs a TCP address");
      l.address = *address;
    }
    return Status::Ok();
  }

  Status SetUpTls() {
    if (!options.tls.enabled()) return Status::Ok();
    FERRY_ASSIGN_OR_RETURN(auto t, TlsContext::Load(options.tls));
    std::lock_guard lock(mu);
    tls = std::move(t);
    return Status::Ok();
  }

  std::shared_ptr<const TlsContext> CurrentTls() const {
    std::lock_guard lock(mu);
    return tls;
  }

  template <class Acceptor, class Endpoint>
  Status Bind(const Listener& l, Acceptor& acceptor, const Endpoint& ep) {
    Ec ec;
    acceptor.open(ep.protocol(), ec);
    if constexpr (std::is_same_v<Acceptor, tcp::acceptor>) {
      if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    }
    if (!ec) acceptor.bind(ep, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return Error(l, ec.message());
    return Status::Ok();
  }

  Status Listen(Listener& l) {
    if (l.address.is_unix()) {
      FERRY_RETURN_IF_ERROR(ClearStaleSocket(l.address.path, l.flag));
      l.unix_acceptor.emplace(*loops[0]);
      return Bind(l, *l.unix_acceptor, unix_socket::endpoint(l.address.path));
    }
    Ec ec;
    auto ip = asio::ip::make_address(l.address.host, ec);
    if (ec) return Error(l, "not an IP address");
    l.tcp_acceptor.emplace(*loops[0]);
    FERRY_RETURN_IF_ERROR(Bind(l, *l.tcp_acceptor, tcp::endpoint(ip, l.address.port)));
    l.port = l.tcp_acceptor->local_endpoint().port();
    return Status::Ok();
  }

  // Registers a session; false when stopping, or at the limit with no idle
  // connection to reclaim. A reclaimed one is closed on its own loop (if it
  // is still idle by then); until it has left, the count may pass the limit
  // by the reclaims under way.
  std::optional<uint64_t> Admit() {
    std::lock_guard lock(mu);
    if (stopping || (stats.open >= options.max_connections && !ReclaimIdleLocked())) {
      ++stats.rejected;
      return std::nullopt;
    }
    ++stats.accepted;
    ++stats.open;
    return next_id++;
  }

  // The longest-open idle connection (lowest id), closed to make room.
  bool ReclaimIdleLocked() {
    if (!options.reclaim_idle) return false;
    for (auto& [id, weak] : live) {
      auto c = weak.lock();
      if (!c || !c->idle() || !c->TakeForReclaim()) continue;
      ++stats.reclaimed;
      asio::post(c->get_executor(), [c] {
        if (c->idle()) c->Close();
      });
      return true;
    }
    return false;
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
    co_await c.tls_stream().async_handshake(asio::ssl::stream_base::server, AwaitInto(ec));
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
  void Launch(Socket socket, bool with_tls) {
    auto id = Admit();
    if (!id) {
      Ec ignored;
      socket.close(ignored);
      return;
    }
    std::shared_ptr<Connection> c;
    if constexpr (std::is_same_v<typename Socket::protocol_type, tcp>) {
      auto t = with_tls ? CurrentTls() : nullptr;
      if (t) {
        auto context = AsioContext(*t);
        c = std::make_shared<Connection>(Connection::Tls(std::move(socket), context), std::move(t));
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
  static asio::awaitable<void> Accept(Impl* self, Acceptor* acceptor, bool with_tls) {
    size_t next = 0;
    for (;;) {
      Ec ec;
      asio::io_context& loop = *self->loops[next++ % self->loops.size()];
      auto socket = co_await acceptor->async_accept(loop, AwaitInto(ec));
      if (ec == asio::error::operation_aborted || !acceptor->is_open()) co_return;
      if (ec) {
        // Out of descriptors, say: do not spin.
        asio::steady_timer pause(co_await asio::this_coro::executor, std::chrono::milliseconds(50));
        co_await pause.async_wait(AwaitInto(ec));
        continue;
      }
      self->Launch(std::move(socket), with_tls);
    }
  }

  void CloseAcceptors() {
    Ec ignored;
    for (auto& l : listeners) {
      if (l.tcp_acceptor) l.tcp_acceptor->close(ignored);
      if (l.unix_acceptor) l.unix_acceptor->close(ignored);
    }
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

bool Server::tls_configured() const { return impl_->CurrentTls() != nullptr; }

asio::awaitable<bool> Server::StartTls(Connection& c) {
  auto t = impl_->CurrentTls();
  if (!t || c.tls()) co_return false;
  auto context = AsioContext(*t);
  if (!c.StartTls(context, std::move(t))) co_return false;
  const bool done = co_await impl_->Handshake(c);  // named: g++ 12 miscompiles `co_return co_await`
  co_return done;
}

Status Server::Start() {
  Impl& s = *impl_;
  FERRY_RETURN_IF_ERROR(s.SetUpListeners());
  FERRY_RETURN_IF_ERROR(s.SetUpTls());
  for (auto& l : s.listeners) {
    FERRY_RETURN_IF_ERROR(s.Listen(l));
    if (!l.port_file.empty()) FERRY_RETURN_IF_ERROR(WriteFileAtomic(l.port_file, std::to_string(l.port) + "\n"));
  }
  for (auto& l : s.listeners) {
    if (l.tcp_acceptor) asio::co_spawn(*s.loops[0], Impl::Accept(&s, &*l.tcp_acceptor, l.tls), asio::detached);
    if (l.unix_acceptor) asio::co_spawn(*s.loops[0], Impl::Accept(&s, &*l.unix_acceptor, false), asio::detached);
  }
  for (auto& loop : s.loops) {
    s.guards.push_back(asio::make_work_guard(*loop));
    s.threads.emplace_back([l = loop.get()] { l->run(); });
  }
  s.started = true;
  return Status::Ok();
}

Status Server::ReloadTls() {
  if (!impl_->options.tls.enabled()) return Status::InvalidArgument("no TLS to reload");
  return impl_->SetUpTls();  // on failure the current one stays
}

uint16_t Server::port() const { return impl_->listeners.empty() ? 0 : impl_->listeners[0].port; }

std::string Server::address() const { return impl_->listeners.empty() ? "" : impl_->listeners[0].ToString(); }

uint16_t Server::tls_port() const { return impl_->listeners.size() < 2 ? 0 : impl_->listeners[1].port; }

std::string Server::tls_address() const { return impl_->listeners.size() < 2 ? "" : impl_->listeners[1].ToString(); }

ServerStats Server::stats() const {
  std::lock_guard lock(impl_->mu);
  return impl_->stats;
}

void Server::Stop() {
  Impl& s = *impl_;
  if (s.stopped) return;
  s.stopped = true;
  if (s.started) {
    asio::post(*s.loops[0], [&s] { s.CloseAcceptors(); });
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
  for (auto& l : s.listeners) {
    if (s.started && l.address.is_unix()) unlink(l.address.path.c_str());
  }
}

}  // namespace ferry::net
