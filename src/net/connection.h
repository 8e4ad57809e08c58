#pragma once
// One accepted client connection of a net::Server, whatever carries it:
// TCP, a Unix-domain socket, or TLS over TCP. It is an Asio AsyncStream
// (async_read_some/async_write_some), so asio::async_read, Beast's HTTP
// reads and writes and the NBD session use it alike. Asio inside: only for
// the .cc files that run sessions (http/server.cc, nbd/server.cc).
//
// Deadlines: Arm(d) before waiting for a client (a request, a handshake, a
// client taking an answer), Disarm() after. When one passes first the
// socket is closed, the pending operation fails, and expired() says why;
// so a client that sends or reads nothing cannot hold a session.
//
// Draining: a session marks itself idle while it waits for the client's
// next request (SetIdle); Server::Stop then closes idle connections at
// once and tells busy ones, through draining(), to end after their answer.
// A session that multiplexes (HTTP/2) is told at once instead (OnDrain),
// to say goodbye in its protocol.
//
// Threading: a connection lives on one event loop (single-threaded), and
// every call is made there.

#include <utility>  // before Boost.Asio under g++ 12

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "net/tls_stream.h"

namespace ferry::net {

class Connection {
 public:
  using Tcp = boost::asio::ip::tcp::socket;
  using Unix = boost::asio::local::stream_protocol::socket;
  using Tls = TlsStream;
  using executor_type = boost::asio::any_io_executor;

  explicit Connection(Tcp socket);
  explicit Connection(Unix socket);
  // `keep`: what the TLS stream's context needs alive (net/tls_context.h),
  // held as long as the connection.
  Connection(Tls stream, std::shared_ptr<const void> keep);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  executor_type get_executor() { return impl_->timer.get_executor(); }

  template <class MutableBuffers, class Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, size_t)>(
        [this](auto handler, const MutableBuffers& b) {
          std::visit([&](auto& s) { s.async_read_some(b, std::move(handler)); }, impl_->stream);
        },
        token, buffers);
  }
  template <class ConstBuffers, class Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, size_t)>(
        [this](auto handler, const ConstBuffers& b) {
          std::visit([&](auto& s) { s.async_write_some(b, std::move(handler)); }, impl_->stream);
        },
        token, buffers);
  }

  bool tls() const { return std::holds_alternative<Tls>(impl_->stream); }
  // A plain TCP connection becomes a TLS one (its handshake still to do):
  // a protocol's in-band upgrade. False when it is not plain TCP.
  bool StartTls(boost::asio::ssl::context& context, std::shared_ptr<const void> keep);
  // Only when tls(): the TLS stream, for its handshake.
  Tls& tls_stream() { return std::get<Tls>(impl_->stream); }

  // The protocol agreed by ALPN during the TLS handshake ("h2"), "" when
  // none was (or no TLS).
  std::string_view alpn() const;

  // The client's IP address ("unix" on a Unix-domain socket).
  const std::string& peer() const { return peer_; }

  void Arm(std::chrono::milliseconds d);
  void Disarm();
  bool expired() const { return impl_->expired; }

  // Closes the socket: pending operations fail, later ones too.
  void Close();
  // Half-closes the sending side (a clean end after the last answer).
  void ShutdownSend();

  // Any thread may read these (the server picks idle connections to
  // reclaim from its accepting loop); only the session sets idle.
  void SetIdle(bool idle) { idle_.store(idle, std::memory_order_relaxed); }
  bool idle() const { return idle_.load(std::memory_order_relaxed); }
  // Picks this connection to be closed to make room, once: true the first
  // time (Server::Admit), false after.
  bool TakeForReclaim() { return !reclaimed_.exchange(true); }
  // Set by Server::Stop: finish the answer in progress, then end.
  void Drain();
  bool draining() const { return draining_; }
  // Drain() calls `f` (on the connection's loop) instead of closing an
  // idle connection.
  void OnDrain(std::function<void()> f) { on_drain_ = std::move(f); }

 private:
  struct Impl {
    template <class S>
    explicit Impl(S s) : timer(s.get_executor()), stream(std::move(s)) {}
    // What a TLS stream's context needs (net/tls_context.h: the SSL_CTXs
    // and what their callbacks point to), declared first so that it goes
    // last, after the stream, which may outlive the Connection (the
    // deadline's pending wait holds this Impl).
    std::shared_ptr<const void> keep;
    boost::asio::steady_timer timer;
    std::variant<Tcp, Unix, Tls> stream;
    // The deadline is lazy (nginx's timers are too): Arm and Disarm only
    // move `deadline` and `armed`; one wait is pending at a time, and when
    // it fires early (the deadline moved on) it waits again. A request
    // then costs no timer operation at all.
    std::chrono::steady_clock::time_point deadline;
    bool armed = false;
    bool waiting = false;
    bool gone = false;  // the Connection was destroyed
    bool expired = false;
    void CloseSocket();
    static void Wait(const std::shared_ptr<Impl>& self);
  };
  // Shared with the deadline's pending wait, which may run after the
  // session has ended (then it finds `gone`).
  std::shared_ptr<Impl> impl_;
  std::string peer_;
  std::function<void()> on_drain_;
  std::atomic<bool> idle_{false};
  std::atomic<bool> reclaimed_{false};
  bool draining_ = false;
};

}  // namespace ferry::net
