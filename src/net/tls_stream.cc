#include "net/tls_stream.h"

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <openssl/err.h>

#include <cerrno>
#include <csignal>
#include <mutex>
#include <new>

namespace ferry::net {
namespace asio = boost::asio;

TlsStream::TlsStream(Tcp socket, asio::ssl::context& context) {
  // OpenSSL sends with write(2), which raises SIGPIPE when the peer has
  // gone (Asio's own sends pass MSG_NOSIGNAL): from the first TLS stream on
  // the process ignores SIGPIPE, as nginx does, and the write fails with
  // EPIPE instead. A handler someone installed is left alone.
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction old {};
    if (::sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) ::signal(SIGPIPE, SIG_IGN);
  });
  SSL* ssl = SSL_new(context.native_handle());
  if (!ssl) throw std::bad_alloc();
  s_ = std::make_shared<State>(std::move(socket), ssl);
  boost::system::error_code ignored;
  s_->socket.non_blocking(true, ignored);
  SSL_set_fd(ssl, static_cast<int>(s_->socket.native_handle()));
  SSL_set_accept_state(ssl);
  // A write is retried with the same bytes until it has sent them all; a
  // read may take several records from one recv.
  SSL_set_mode(ssl, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_set_read_ahead(ssl, 1);
}

TlsStream::Next TlsStream::Step(State& s, Op op, void* data, size_t size, boost::system::error_code& ec,
                                size_t* n) {
  *n = 0;
  if (!s.socket.is_open()) {
    ec = asio::error::bad_descriptor;
    return Next::kDone;
  }
  if (op != Op::kHandshake && size == 0) return Next::kDone;
  SSL* ssl = s.ssl.get();
  ERR_clear_error();
  errno = 0;
  int r = 0;
  switch (op) {
    case Op::kHandshake:
      r = SSL_do_handshake(ssl);
      break;
    case Op::kRead:
      r = SSL_read_ex(ssl, data, size, n);
      break;
    case Op::kWrite:
      r = SSL_write_ex(ssl, data, size, n);
      break;
  }
  if (r == 1) return Next::kDone;
  const int saved_errno = errno;
  *n = 0;
  switch (SSL_get_error(ssl, r)) {
    case SSL_ERROR_WANT_READ:
      return Next::kWaitRead;
    case SSL_ERROR_WANT_WRITE:
      return Next::kWaitWrite;
    case SSL_ERROR_ZERO_RETURN:  // the peer's close_notify
      ec = asio::error::eof;
      return Next::kDone;
    case SSL_ERROR_SYSCALL:
      if (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK) {
        return op == Op::kWrite ? Next::kWaitWrite : Next::kWaitRead;
      }
      ec = saved_errno != 0 ? boost::system::error_code(saved_errno, asio::error::get_system_category())
                            : boost::system::error_code(asio::error::eof);
      return Next::kDone;
    default: {
      const unsigned long e = ERR_peek_error();
      if (ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
        ec = asio::ssl::error::stream_truncated;  // TCP ended without close_notify (as asio says it)
      } else {
        ec = boost::system::error_code(static_cast<int>(e), asio::error::get_ssl_category());
      }
      ERR_clear_error();
      return Next::kDone;
    }
  }
}

}  // namespace ferry::net
