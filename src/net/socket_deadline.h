#pragma once
// A deadline on a socket's next operation: Arm before reading a request
// (or a handshake) or writing an answer, Disarm after; when it passes
// first, the socket is closed and the operation fails, so a client that
// sends nothing or reads nothing cannot hold a session. Asio inside: only
// for the .cc files that run sockets (the volume API, the NBD server).
//
// One per session, used on the session's executor (strand or one thread).

#include <utility>  // before Boost.Asio under g++ 12

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <memory>

namespace ferry::net {

class SocketDeadline {
 public:
  explicit SocketDeadline(boost::asio::ip::tcp::socket& socket)
      : state_(std::make_shared<State>(socket)) {}
  ~SocketDeadline() { Disarm(); }
  SocketDeadline(const SocketDeadline&) = delete;
  SocketDeadline& operator=(const SocketDeadline&) = delete;

  void Arm(std::chrono::milliseconds d) {
    const uint64_t armed = ++state_->generation;
    state_->timer.expires_after(d);
    // The handler holds the state, not this object: it may run after the
    // session ended (with operation_aborted, or late with success).
    state_->timer.async_wait([s = state_, armed](const boost::system::error_code& ec) {
      if (ec || armed != s->generation) return;  // disarmed or re-armed since
      s->expired = true;
      boost::system::error_code ignored;
      s->socket.cancel(ignored);
      s->socket.close(ignored);
    });
  }
  void Disarm() {
    ++state_->generation;
    state_->timer.cancel();
  }
  // The socket was closed because a deadline passed.
  bool expired() const { return state_->expired; }

 private:
  struct State {
    explicit State(boost::asio::ip::tcp::socket& s) : socket(s), timer(s.get_executor()) {}
    boost::asio::ip::tcp::socket& socket;
    boost::asio::steady_timer timer;
    uint64_t generation = 0;
    bool expired = false;
  };
  std::shared_ptr<State> state_;
};

}  // namespace ferry::net
