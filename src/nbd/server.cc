// The only nbd file that includes Boost.Asio.
#include <utility>  // before Boost.Asio under g++ 12

#include "nbd/server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <spdlog/spdlog.h>

#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "nbd/protocol.h"
#include "net/socket_deadline.h"

namespace ferry::nbd {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using ErrorCode_ = boost::system::error_code;

namespace {

auto Token(ErrorCode_& ec) { return net::redirect_error(net::use_awaitable, ec); }

constexpr uint32_t kPreferredBlock = 4096;

uint16_t TxFlags(const BlockDevice& d) {
  uint16_t f = kTxHasFlags | kTxSendFlush | kTxSendFua | kTxSendTrim | kTxSendWriteZeroes | kTxCanMultiConn;
  if (d.read_only()) f |= kTxReadOnly;
  return f;
}

uint32_t ErrnoOf(const Status& st) {
  switch (st.code()) {
    case ErrorCode::kOk:
      return 0;
    case ErrorCode::kInvalidArgument:
      return kEinval;
    case ErrorCode::kAccessDenied:
      return kEperm;
    case ErrorCode::kUnsupported:
      return kEnotsup;
    default:
      return kEio;
  }
}

// One device call's result, made on a worker.
struct Done {
  Status status;
  std::string data;  // READ
};

net::awaitable<Done> RunOnDevice(std::shared_ptr<BlockDevice> dev, Request r, std::shared_ptr<std::string> data) {
  Done d;
  bool fua = r.flags & kCmdFlagFua;
  switch (r.type) {
    case kCmdRead:
      d.data.resize(r.length);
      d.status = dev->Read(r.offset, r.length, d.data.data());
      break;
    case kCmdWrite:
      d.status = dev->Write(r.offset, *data, fua);
      break;
    case kCmdFlush:
      d.status = dev->Flush();
      break;
    case kCmdTrim:
      d.status = dev->Trim(r.offset, r.length, fua);
      break;
    case kCmdWriteZeroes:
      d.status = dev->WriteZeroes(r.offset, r.length, fua);
      break;
    default:  // CACHE: nothing to do
      break;
  }
  co_return d;
}

}  // namespace

struct NbdServer::Impl {
  NbdServerOptions options;
  net::io_context ioc{1};
  net::thread_pool workers;
  tcp::acceptor acceptor{ioc};
  std::vector<std::thread> threads;
  uint16_t port = 0;
  std::mutex mu;
  std::map<std::string, std::shared_ptr<BlockDevice>> exports;  // guarded by mu
  bool stopped = false;

  explicit Impl(NbdServerOptions o)
      : options(std::move(o)), workers(static_cast<size_t>(std::max(1, options.worker_threads))) {}

  std::shared_ptr<BlockDevice> Find(const std::string& name) {
    std::lock_guard lock(mu);
    auto it = exports.find(name);
    return it == exports.end() ? nullptr : it->second;
  }

  net::awaitable<bool> Send(tcp::socket& s, const std::string& bytes) {
    ErrorCode_ ec;
    co_await net::async_write(s, net::buffer(bytes), Token(ec));
    co_return !ec;
  }

  net::awaitable<bool> Recv(tcp::socket& s, std::string* out, size_t n) {
    out->resize(n);
    if (n == 0) co_return true;
    ErrorCode_ ec;
    co_await net::async_read(s, net::buffer(out->data(), n), Token(ec));
    co_return !ec;
  }

  // Option haggling; the export to serve, or null to close.
  net::awaitable<std::shared_ptr<BlockDevice>> Handshake(tcp::socket& s) {
    if (!co_await Send(s, EncodeGreeting())) co_return nullptr;
    std::string buf;
    if (!co_await Recv(s, &buf, 4)) co_return nullptr;
    uint32_t client_flags = Get32(reinterpret_cast<const unsigned char*>(buf.data()));
    if (client_flags & ~(kClientFixedNewstyle | kClientNoZeroes)) co_return nullptr;
    bool no_zeroes = client_flags & kClientNoZeroes;
    for (;;) {
      if (!co_await Recv(s, &buf, kOptionHeaderSize)) co_return nullptr;
      auto h = DecodeOptionHeader(buf);
      if (!h.ok()) co_return nullptr;  // a protocol violation: this client only
      std::string data;
      if (!co_await Recv(s, &data, h->length)) co_return nullptr;
      switch (h->option) {
        case kOptExportName: {
          auto dev = Find(data);
          if (!dev) co_return nullptr;  // the option has no error reply
          if (!co_await Send(s, EncodeExportNameReply(dev->size(), TxFlags(*dev), no_zeroes))) co_return nullptr;
          co_return dev;
        }
        case kOptAbort:
          co_await Send(s, EncodeOptionReply(h->option, kRepAck));
          co_return nullptr;
        case kOptList: {
          if (!data.empty()) {
            if (!co_await Send(s, EncodeOptionReply(h->option, kRepErrInvalid))) co_return nullptr;
            break;
          }
          std::vector<std::string> names;
          {
            std::lock_guard lock(mu);
            for (const auto& [n, _] : exports) names.push_back(n);
          }
          std::string out;
          for (const auto& n : names) out += EncodeOptionReply(h->option, kRepServer, EncodeServerName(n));
          out += EncodeOptionReply(h->option, kRepAck);
          if (!co_await Send(s, out)) co_return nullptr;
          break;
        }
        case kOptInfo:
        case kOptGo: {
          auto req = DecodeInfoRequest(data);
          std::shared_ptr<BlockDevice> dev = req.ok() ? Find(req->name) : nullptr;
          std::string out;
          if (!req.ok()) {
            out = EncodeOptionReply(h->option, kRepErrInvalid);
          } else if (!dev) {
            out = EncodeOptionReply(h->option, kRepErrUnknown, "no export named '" + req->name + "'");
          } else {
            out = EncodeOptionReply(h->option, kRepInfo, EncodeInfoExport(dev->size(), TxFlags(*dev)));
            out += EncodeOptionReply(h->option, kRepInfo, EncodeInfoBlockSize(1, kPreferredBlock, kMaxRequestLength));
            out += EncodeOptionReply(h->option, kRepAck);
          }
          if (!co_await Send(s, out)) co_return nullptr;
          if (dev && h->option == kOptGo) co_return dev;
          break;
        }
        default:
          if (!co_await Send(s, EncodeOptionReply(h->option, kRepErrUnsup))) co_return nullptr;
      }
    }
  }

  net::awaitable<void> Session(tcp::socket s) {
    ErrorCode_ ignored;
    s.set_option(tcp::no_delay(true), ignored);
    ::ferry::net::SocketDeadline deadline(s);
    deadline.Arm(options.client_timeout);
    std::shared_ptr<BlockDevice> dev = co_await Handshake(s);
    deadline.Disarm();
    if (!dev) co_return;
    uint16_t flags = TxFlags(*dev);
    std::string head;
    for (;;) {
      if (!co_await Recv(s, &head, kRequestSize)) break;
      auto r = DecodeRequest(head);
      if (!r.ok()) break;  // a protocol violation: disconnect
      auto data = std::make_shared<std::string>();
      if (r->type == kCmdWrite) {
        if (r->length > kMaxRequestLength) break;  // cannot even read it sanely
        if (!co_await Recv(s, data.get(), r->length)) break;
      }
      if (r->type == kCmdDisc) break;
      uint32_t error = ValidateRequest(*r, dev->size(), flags);
      Done done;
      if (error == 0) {
        done = co_await net::co_spawn(workers, RunOnDevice(dev, *r, data), net::use_awaitable);
        error = ErrnoOf(done.status);
        if (!done.status.ok()) spdlog::warn("nbd: request {} at {}: {}", r->type, r->offset, done.status.ToString());
      }
      std::string reply = EncodeSimpleReply(error, r->handle);
      if (r->type == kCmdRead && error == 0) reply += done.data;
      deadline.Arm(options.client_timeout);
      const bool sent = co_await Send(s, reply);
      deadline.Disarm();
      if (!sent) break;
    }
    s.shutdown(tcp::socket::shutdown_both, ignored);
  }

  net::awaitable<void> Accept() {
    for (;;) {
      ErrorCode_ ec;
      // Each session on a strand of its own: its deadline's timer and its
      // socket are then never used from two threads at once.
      tcp::socket s = co_await acceptor.async_accept(net::make_strand(ioc), Token(ec));
      if (ec == net::error::operation_aborted || !acceptor.is_open()) co_return;
      if (ec) continue;
      auto ex = s.get_executor();
      net::co_spawn(ex, Session(std::move(s)), net::detached);
    }
  }
};

NbdServer::NbdServer(NbdServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

NbdServer::~NbdServer() { Stop(); }

void NbdServer::AddExport(const std::string& name, std::shared_ptr<BlockDevice> device) {
  std::lock_guard lock(impl_->mu);
  impl_->exports[name] = std::move(device);
}

void NbdServer::RemoveExport(const std::string& name) {
  std::lock_guard lock(impl_->mu);
  impl_->exports.erase(name);
}

Status NbdServer::Start() {
  const std::string& listen = impl_->options.listen;
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return Status::InvalidArgument("--nbd " + listen + ": expected HOST:PORT");
  std::string host = listen.substr(0, colon);
  if (host.size() > 1 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  ErrorCode_ ec;
  auto addr = net::ip::make_address(host, ec);
  if (ec) return Status::InvalidArgument("--nbd " + listen + ": not an IP address");
  int port = -1;
  try {
    port = std::stoi(listen.substr(colon + 1));
  } catch (...) {
  }
  if (port < 0 || port > 65535) return Status::InvalidArgument("--nbd " + listen + ": bad port");
  tcp::endpoint ep(addr, static_cast<uint16_t>(port));
  impl_->acceptor.open(ep.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(ep, ec);
  if (!ec) impl_->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return Status::InvalidArgument("--nbd " + listen + ": " + ec.message());
  impl_->port = impl_->acceptor.local_endpoint().port();
  net::co_spawn(impl_->ioc, impl_->Accept(), net::detached);
  for (int i = 0; i < std::max(1, impl_->options.io_threads); ++i) {
    impl_->threads.emplace_back([this] { impl_->ioc.run(); });
  }
  return Status::Ok();
}

uint16_t NbdServer::port() const { return impl_->port; }

void NbdServer::Stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  net::post(impl_->ioc, [this] {
    ErrorCode_ ignored;
    impl_->acceptor.close(ignored);
  });
  impl_->ioc.stop();
  for (auto& t : impl_->threads) t.join();
  impl_->workers.join();
}

}  // namespace ferry::nbd
