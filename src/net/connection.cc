#include "net/connection.h"

namespace ferry::net {
namespace {

std::string PeerOf(const Connection::Tcp& s) {
  boost::system::error_code ec;
  auto ep = s.remote_endpoint(ec);
  return ec ? std::string() : ep.address().to_string();
}

}  // namespace

Connection::Connection(Tcp socket) : peer_(PeerOf(socket)) {
  boost::system::error_code ignored;
  socket.set_option(boost::asio::ip::tcp::no_delay(true), ignored);
  impl_ = std::make_shared<Impl>(std::move(socket));
}

Connection::Connection(Unix socket) : impl_(std::make_shared<Impl>(std::move(socket))), peer_("unix") {}

Connection::Connection(Tls stream, std::shared_ptr<const void> keep)
    : peer_(PeerOf(stream.next_layer())) {
  boost::system::error_code ignored;
  stream.next_layer().set_option(boost::asio::ip::tcp::no_delay(true), ignored);
  impl_ = std::make_shared<Impl>(std::move(stream));
  impl_->keep = std::move(keep);
}

Connection::~Connection() {
  impl_->gone = true;
  impl_->armed = false;
  impl_->timer.cancel();
  Close();
}

void Connection::Impl::CloseSocket() {
  boost::system::error_code ignored;
  std::visit(
      [&](auto& s) {
        if constexpr (std::is_same_v<std::decay_t<decltype(s)>, Tls>) {
          s.next_layer().close(ignored);
        } else {
          s.close(ignored);
        }
      },
      stream);
}

void Connection::Impl::Wait(const std::shared_ptr<Impl>& self) {
  self->waiting = true;
  self->timer.expires_at(self->deadline);
  self->timer.async_wait([s = self](const boost::system::error_code& ec) {
    s->waiting = false;
    if (s->gone || !s->armed) return;
    // Cancelled by Arm for an earlier deadline, or the deadline moved on.
    if (ec || std::chrono::steady_clock::now() < s->deadline) {
      Wait(s);
      return;
    }
    s->expired = true;
    s->CloseSocket();
  });
}

void Connection::Arm(std::chrono::milliseconds d) {
  impl_->deadline = std::chrono::steady_clock::now() + d;
  impl_->armed = true;
  if (!impl_->waiting) {
    Impl::Wait(impl_);
  } else if (impl_->deadline < impl_->timer.expiry()) {
    impl_->timer.cancel();  // its handler waits again, for the new deadline
  }
}

void Connection::Disarm() { impl_->armed = false; }

void Connection::Close() { impl_->CloseSocket(); }

void Connection::ShutdownSend() {
  boost::system::error_code ignored;
  std::visit(
      [&](auto& s) {
        if constexpr (std::is_same_v<std::decay_t<decltype(s)>, Tls>) {
          // No close_notify round trip: the answers were framed, and a
          // client that stopped reading must not hold us here.
          s.next_layer().shutdown(Tcp::shutdown_send, ignored);
        } else {
          s.shutdown(std::decay_t<decltype(s)>::shutdown_send, ignored);
        }
      },
      impl_->stream);
}

bool Connection::StartTls(boost::asio::ssl::context& context, std::shared_ptr<const void> keep) {
  auto* tcp = std::get_if<Tcp>(&impl_->stream);
  if (!tcp) return false;
  Tcp socket = std::move(*tcp);
  impl_->keep = std::move(keep);
  impl_->stream.emplace<Tls>(std::move(socket), context);
  return true;
}

std::string_view Connection::alpn() const {
  const auto* tls = std::get_if<Tls>(&impl_->stream);
  if (!tls) return {};
  const unsigned char* p = nullptr;
  unsigned int n = 0;
  SSL_get0_alpn_selected(tls->native_handle(), &p, &n);
  return p ? std::string_view(reinterpret_cast<const char*>(p), n) : std::string_view();
}

void Connection::Drain() {
  draining_ = true;
  if (on_drain_) {
    on_drain_();
  } else if (idle_) {
    Close();
  }
}

}  // namespace ferry::net
