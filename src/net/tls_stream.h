#pragma once
// The server's side of a TLS connection over a TCP socket: OpenSSL reads
// and writes the socket itself (a socket BIO on a non-blocking fd) and the
// event loop only waits for readiness. An Asio AsyncStream, so Beast, the
// HTTP/2 session and the NBD session use it as they use a plain socket.
//
// Why not asio::ssl::stream: that one runs OpenSSL against a memory BIO
// pair of 17 KB, so each record is copied once more and costs one socket
// operation and one completion of its own, and a write of a header and a
// body sends the header as a record by itself. Here one write sends as many
// records as the socket takes (up to kMaxWrite), a short first buffer is
// sent in one record with what follows it, and a read takes what OpenSSL
// has already buffered without waiting.
//
// Contracts (Asio's for a stream): one read and one write may be pending
// at a time, from the socket's event loop only; completions are never run
// inside the call that starts them. After next_layer().close() every
// operation fails with bad_descriptor and OpenSSL never touches the closed
// descriptor again (its number may belong to another connection by then).
// Closing ends TCP only: no close_notify is sent. The first stream made
// sets SIGPIPE to be ignored when it is at its default (OpenSSL writes the
// socket with write(2); a peer gone is then EPIPE, not death).

#include <utility>  // before Boost.Asio under g++ 12

#include <boost/asio/buffer.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream_base.hpp>
#include <openssl/ssl.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>

namespace ferry::net {

class TlsStream {
 public:
  using Tcp = boost::asio::ip::tcp::socket;
  using executor_type = Tcp::executor_type;
  // The most one write sends before it completes (other connections of
  // the loop get their turn between writes).
  static constexpr size_t kMaxWrite = 256 * 1024;
  // A first buffer shorter than this, followed by more, is sent in one
  // record with the start of what follows (an HTTP header with its body).
  static constexpr size_t kCoalesce = 16 * 1024;

  // The server's side: `context` gives the certificates, ALPN and SNI
  // callbacks (it must outlive the stream).
  TlsStream(Tcp socket, boost::asio::ssl::context& context);
  TlsStream(TlsStream&&) noexcept = default;
  TlsStream& operator=(TlsStream&&) noexcept = default;
  ~TlsStream() = default;

  Tcp& next_layer() { return s_->socket; }
  const Tcp& next_layer() const { return s_->socket; }
  SSL* native_handle() const { return s_->ssl.get(); }
  executor_type get_executor() { return s_->socket.get_executor(); }

  template <class Token>
  auto async_handshake(boost::asio::ssl::stream_base::handshake_type, Token&& token) {
    return Run(Op::kHandshake, nullptr, 0, std::forward<Token>(token));
  }

  template <class MutableBuffers, class Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    for (auto it = boost::asio::buffer_sequence_begin(buffers); it != boost::asio::buffer_sequence_end(buffers); ++it) {
      boost::asio::mutable_buffer b(*it);
      if (b.size() > 0) return Run(Op::kRead, b.data(), b.size(), std::forward<Token>(token));
    }
    return Run(Op::kRead, nullptr, 0, std::forward<Token>(token));
  }

  template <class ConstBuffers, class Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token) {
    const void* data = nullptr;
    size_t size = 0;
    auto it = boost::asio::buffer_sequence_begin(buffers);
    const auto end = boost::asio::buffer_sequence_end(buffers);
    for (; it != end && size == 0; ++it) {
      boost::asio::const_buffer b(*it);
      data = b.data();
      size = b.size();
    }
    if (size > 0 && size < kCoalesce && it != end) {
      // A short first buffer and more after it: one record for both.
      std::string& out = s_->staging;
      out.assign(static_cast<const char*>(data), size);
      for (; it != end && out.size() < kCoalesce; ++it) {
        boost::asio::const_buffer b(*it);
        out.append(static_cast<const char*>(b.data()), std::min(b.size(), kCoalesce - out.size()));
      }
      data = out.data();
      size = out.size();
    }
    return Run(Op::kWrite, const_cast<void*>(data), std::min(size, kMaxWrite), std::forward<Token>(token));
  }

 private:
  enum class Op { kHandshake, kRead, kWrite };
  // What an OpenSSL call's return asked for.
  enum class Next { kDone, kWaitRead, kWaitWrite };
  struct State {
    State(Tcp s, SSL* p) : socket(std::move(s)), ssl(p, &SSL_free) {}
    Tcp socket;
    std::unique_ptr<SSL, void (*)(SSL*)> ssl;
    std::string staging;  // a coalesced write's bytes, while it is pending
  };
  // One step of `op`: the OpenSSL call on `data`/`size`. On kDone, `ec`
  // and `*n` are the operation's result.
  static Next Step(State& s, Op op, void* data, size_t size, boost::system::error_code& ec, size_t* n);

  template <class Token>
  auto Run(Op op, void* data, size_t size, Token&& token) {
    namespace asio = boost::asio;
    return asio::async_compose<Token, void(boost::system::error_code, size_t)>(
        [s = s_, op, data, size, first = true](auto& self, boost::system::error_code ec = {}) mutable {
          size_t n = 0;
          Next next = Next::kDone;
          if (!ec) next = Step(*s, op, data, size, ec, &n);
          if (next != Next::kDone) {
            first = false;
            s->socket.async_wait(next == Next::kWaitRead ? Tcp::wait_read : Tcp::wait_write, std::move(self));
            return;
          }
          if (!first) {
            self.complete(ec, n);
            return;
          }
          // Done inside the initiating call: complete from the loop.
          auto ex = s->socket.get_executor();
          asio::post(ex, [self = std::move(self), ec, n]() mutable { self.complete(ec, n); });
        },
        token, s_->socket);
  }

  std::shared_ptr<State> s_;  // shared with pending operations
};

}  // namespace ferry::net
