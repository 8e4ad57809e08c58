// The only nbd file that includes Boost.Asio.
#include <utility>  // before Boost.Asio under g++ 12

#include "nbd/server.h"

#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <spdlog/spdlog.h>

#include <map>
#include <mutex>
#include <vector>

#include "nbd/protocol.h"
#include "net/server.h"

namespace ferry::nbd {

namespace asio = boost::asio;
using ErrorCode_ = boost::system::error_code;

namespace {

auto Token(ErrorCode_& ec) { return asio::redirect_error(asio::use_awaitable, ec); }

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

Done RunOnDevice(const std::shared_ptr<BlockDevice>& dev, const Request& r, const std::string& data) {
  Done d;
  bool fua = r.flags & kCmdFlagFua;
  switch (r.type) {
    case kCmdRead:
      d.data.resize(r.length);
      d.status = dev->Read(r.offset, r.length, d.data.data());
      break;
    case kCmdWrite:
      d.status = dev->Write(r.offset, data, fua);
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
  return d;
}

}  // namespace

struct NbdServer::Impl {
  NbdServerOptions options;
  std::mutex mu;
  std::map<std::string, std::shared_ptr<BlockDevice>> exports;  // guarded by mu
  net::Server server;

  static net::ServerOptions NetOptions(const NbdServerOptions& o) {
    net::ServerOptions n;
    n.listen = o.listen;
    n.flag = "--nbd";
    n.io_threads = o.io_threads;
    n.worker_threads = o.worker_threads;
    return n;
  }

  explicit Impl(NbdServerOptions o)
      : options(std::move(o)), server(NetOptions(options), [this](net::Connection& c) { return Session(c); }) {}

  std::shared_ptr<BlockDevice> Find(const std::string& name) {
    std::lock_guard lock(mu);
    auto it = exports.find(name);
    return it == exports.end() ? nullptr : it->second;
  }

  asio::awaitable<bool> Send(net::Connection& s, const std::string& bytes) {
    ErrorCode_ ec;
    co_await asio::async_write(s, asio::buffer(bytes), Token(ec));
    co_return !ec;
  }

  asio::awaitable<bool> Recv(net::Connection& s, std::string* out, size_t n) {
    out->resize(n);
    if (n == 0) co_return true;
    ErrorCode_ ec;
    co_await asio::async_read(s, asio::buffer(out->data(), n), Token(ec));
    co_return !ec;
  }

  // Option haggling; the export to serve, or null to close.
  asio::awaitable<std::shared_ptr<BlockDevice>> Handshake(net::Connection& s) {
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
          // (No ?: with temporaries in a coroutine: g++ 12 gets them wrong.)
          std::shared_ptr<BlockDevice> dev;
          if (req.ok()) dev = Find(req->name);
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

  asio::awaitable<void> Session(net::Connection& s) {
    s.Arm(options.client_timeout);
    std::shared_ptr<BlockDevice> dev = co_await Handshake(s);
    s.Disarm();
    if (!dev) co_return;
    uint16_t flags = TxFlags(*dev);
    std::string head;
    for (;;) {
      // Between requests a connection is idle: a stop closes it at once.
      s.SetIdle(true);
      if (s.draining() || !co_await Recv(s, &head, kRequestSize)) break;
      s.SetIdle(false);
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
        Request req = *r;
        auto run = [dev, req, data] { return RunOnDevice(dev, req, *data); };
        done = co_await server.Blocking(run);
        error = ErrnoOf(done.status);
        if (!done.status.ok()) spdlog::warn("nbd: request {} at {}: {}", r->type, r->offset, done.status.ToString());
      }
      std::string reply = EncodeSimpleReply(error, r->handle);
      if (r->type == kCmdRead && error == 0) reply += done.data;
      s.Arm(options.client_timeout);
      const bool sent = co_await Send(s, reply);
      s.Disarm();
      if (!sent) break;
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

Status NbdServer::Start() { return impl_->server.Start(); }

uint16_t NbdServer::port() const { return impl_->server.port(); }

void NbdServer::Stop() { impl_->server.Stop(); }

}  // namespace ferry::nbd
