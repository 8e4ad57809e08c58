// The only nbd files that include Boost.Asio: this one and transmission.cc.
#include <utility>  // before Boost.Asio under g++ 12

#include "nbd/server.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <vector>

#include "nbd/protocol.h"
#include "nbd/transmission.h"
#include "net/server.h"

namespace ferry::nbd {

namespace asio = boost::asio;
using Ec = boost::system::error_code;

namespace {

constexpr uint32_t kPreferredBlock = 4096;

// Every device here makes a FLUSH on one connection cover writes completed
// on any (one file, one fdatasync): multi-conn's promise holds.
uint16_t TxFlags(const BlockDevice& d, bool structured) {
  uint16_t f = kTxHasFlags | kTxSendFlush | kTxSendFua | kTxSendTrim | kTxSendWriteZeroes | kTxCanMultiConn |
               kTxSendCache;
  if (structured) f |= kTxSendDf;
  if (d.read_only()) f |= kTxReadOnly;
  return f;
}

// Option haggling's state for one connection.
struct Haggle {
  bool no_zeroes = false;
  bool tls = false;         // STARTTLS done
  bool structured = false;
  std::string meta_export;  // base:allocation selected for this export
  bool meta = false;
};

}  // namespace

Result<TlsMode> ParseTlsMode(const std::string& text) {
  if (text == "off") return TlsMode::kOff;
  if (text == "on") return TlsMode::kOn;
  if (text == "require") return TlsMode::kRequire;
  return Status::InvalidArgument("--tls must be off, on or require, not '" + text + "'");
}

struct NbdServer::Impl {
  NbdServerOptions options;
  std::mutex mu;
  std::map<std::string, std::shared_ptr<BlockDevice>> exports;  // guarded by mu
  std::atomic<uint64_t> requests{0}, most_in_flight{0};
  net::Server server;
  // Destroyed before `server`: calls still running finish, and their
  // results land on loops that still exist.
  asio::thread_pool waiters;

  static net::ServerOptions NetOptions(const NbdServerOptions& o) {
    net::ServerOptions n;
    n.listen = o.listen;
    n.flag = "--nbd";
    n.reclaim_idle = false;  // a client between requests is a mounted disk
    n.io_threads = o.io_threads;
    n.worker_threads = o.worker_threads;
    n.handshake_timeout = o.client_timeout;
    if (o.tls.mode != TlsMode::kOff) {
      n.tls.certificates = {{o.tls.cert_file, o.tls.key_file}};
      n.tls.ca_file = o.tls.ca_file;
      n.tls.in_band = true;
    }
    return n;
  }

  explicit Impl(NbdServerOptions o)
      : options(std::move(o)),
        server(NetOptions(options), [this](net::Connection& c) { return Session(c); }),
        waiters(static_cast<size_t>(std::max(1, options.wait_threads))) {}

  std::shared_ptr<BlockDevice> Find(const std::string& name) {
    std::lock_guard lock(mu);
    auto it = exports.find(name);
    return it == exports.end() ? nullptr : it->second;
  }

  asio::awaitable<bool> Send(net::Connection& s, const std::string& bytes) {
    Ec ec;
    co_await asio::async_write(s, asio::buffer(bytes), net::AwaitInto(ec));
    co_return !ec;
  }

  asio::awaitable<bool> Recv(net::Connection& s, std::string* out, size_t n) { return ReadExactly(s, out, n); }

  std::string List(uint32_t option, const std::string& data) {
    if (!data.empty()) return EncodeOptionReply(option, kRepErrInvalid);
    std::vector<std::string> names;
    {
      std::lock_guard lock(mu);
      for (const auto& [n, _] : exports) names.push_back(n);
    }
    std::string out;
    for (const auto& n : names) out += EncodeOptionReply(option, kRepServer, EncodeServerName(n));
    return out + EncodeOptionReply(option, kRepAck);
  }

  // INFO and GO: the export's information, or an error.
  std::string Info(uint32_t option, const std::string& data, std::shared_ptr<BlockDevice>* dev, const Haggle& h) {
    auto req = DecodeInfoRequest(data);
    if (!req.ok()) return EncodeOptionReply(option, kRepErrInvalid);
    *dev = Find(req->name);
    if (!*dev) return EncodeOptionReply(option, kRepErrUnknown, "no export named '" + req->name + "'");
    std::string out = EncodeOptionReply(option, kRepInfo, EncodeInfoExport((*dev)->size(), TxFlags(**dev, h.structured)));
    out += EncodeOptionReply(option, kRepInfo, EncodeInfoBlockSize(1, kPreferredBlock, kMaxRequestLength));
    return out + EncodeOptionReply(option, kRepAck);
  }

  // LIST_META_CONTEXT and SET_META_CONTEXT.
  std::string MetaContext(uint32_t option, const std::string& data, Haggle* h) {
    if (!h->structured) return EncodeOptionReply(option, kRepErrInvalid, "structured replies first");
    auto req = DecodeMetaContextRequest(data);
    if (!req.ok()) return EncodeOptionReply(option, kRepErrInvalid, req.status().message());
    if (!Find(req->name)) return EncodeOptionReply(option, kRepErrUnknown, "no export named '" + req->name + "'");
    const bool list = option == kOptListMetaContext;
    auto matched = MatchMetaContexts(req->queries, list);
    if (!list) {
      h->meta = !matched.empty();
      h->meta_export = req->name;
    }
    std::string out;
    for (const auto& m : matched) out += EncodeOptionReply(option, kRepMetaContext, EncodeMetaContext(list ? 0 : kBaseAllocationId, m));
    return out + EncodeOptionReply(option, kRepAck);
  }

  // STARTTLS: ACK and the upgrade, or an error reply (false: close).
  // (Named results throughout: g++ 12 miscompiles `co_return co_await`.)
  asio::awaitable<bool> StartTls(net::Connection& s, const std::string& data, Haggle* h) {
    uint32_t answer = kRepAck;
    std::string why;
    if (options.tls.mode == TlsMode::kOff) {
      answer = kRepErrPolicy;
      why = "TLS is off";
    } else if (h->tls || !data.empty()) {
      answer = kRepErrInvalid;
    }
    const std::string reply = EncodeOptionReply(kOptStartTls, answer, why);
    const bool sent = co_await Send(s, reply);
    if (!sent || answer != kRepAck) co_return sent;
    const bool upgraded = co_await server.StartTls(s);
    if (!upgraded) co_return false;  // too late for anything but closing
    Haggle fresh;  // what was agreed in the clear is forgotten
    fresh.no_zeroes = h->no_zeroes;
    fresh.tls = true;
    *h = fresh;
    co_return true;
  }

  // Option haggling: what transmission is to serve, or no device to close.
  asio::awaitable<Negotiated> Handshake(net::Connection& s) {
    Negotiated none;
    if (!co_await Send(s, EncodeGreeting())) co_return none;
    std::string buf;
    if (!co_await Recv(s, &buf, 4)) co_return none;
    uint32_t client_flags = Get32(reinterpret_cast<const unsigned char*>(buf.data()));
    if (client_flags & ~(kClientFixedNewstyle | kClientNoZeroes)) co_return none;
    Haggle h;
    h.no_zeroes = client_flags & kClientNoZeroes;
    for (;;) {
      if (!co_await Recv(s, &buf, kOptionHeaderSize)) co_return none;
      auto oh = DecodeOptionHeader(buf);
      if (!oh.ok()) co_return none;  // a protocol violation: this client only
      std::string data;
      if (!co_await Recv(s, &data, oh->length)) co_return none;
      const uint32_t option = oh->option;
      const bool refused = options.tls.mode == TlsMode::kRequire && !h.tls && option != kOptStartTls &&
                           option != kOptAbort;
      if (refused && option == kOptExportName) co_return none;  // it has no error reply
      if (refused) {
        const std::string reply = EncodeOptionReply(option, kRepErrTlsReqd, "TLS is required");
        if (!co_await Send(s, reply)) co_return none;
        continue;
      }
      std::shared_ptr<BlockDevice> dev;
      std::string out;
      switch (option) {
        case kOptExportName:
          dev = Find(data);
          if (!dev) co_return none;  // the option has no error reply
          if (!co_await Send(s, EncodeExportNameReply(dev->size(), TxFlags(*dev, h.structured), h.no_zeroes))) {
            co_return none;
          }
          co_return Agreed(dev, data, h);
        case kOptAbort:
          co_await Send(s, EncodeOptionReply(option, kRepAck));
          co_return none;
        case kOptStartTls: {
          const bool go_on = co_await StartTls(s, data, &h);
          if (!go_on) co_return none;
          continue;
        }
        case kOptStructuredReply:
          h.structured = h.structured || data.empty();
          out = EncodeOptionReply(option, data.empty() ? kRepAck : kRepErrInvalid);
          break;
        case kOptListMetaContext:
        case kOptSetMetaContext:
          out = MetaContext(option, data, &h);
          break;
        case kOptList:
          out = List(option, data);
          break;
        case kOptInfo:
        case kOptGo:
          out = Info(option, data, &dev, h);
          break;
        default:
          out = EncodeOptionReply(option, kRepErrUnsup);
      }
      if (!co_await Send(s, out)) co_return none;
      if (dev && option == kOptGo) {
        auto req = DecodeInfoRequest(data);  // valid: Info found its export
        co_return Agreed(dev, req->name, h);
      }
    }
  }

  static Negotiated Agreed(std::shared_ptr<BlockDevice> dev, const std::string& name, const Haggle& h) {
    Negotiated n;
    n.tx_flags = TxFlags(*dev, h.structured);
    n.structured = h.structured;
    n.base_allocation = h.meta && h.meta_export == name;
    n.dev = std::move(dev);
    return n;
  }

  asio::awaitable<void> Session(net::Connection& s) {
    s.Arm(options.client_timeout);
    Negotiated n = co_await Handshake(s);
    s.Disarm();
    if (!n.dev) co_return;
    TransmissionContext context{&server, &waiters, &options, &requests, &most_in_flight};
    co_await Transmit(context, s, std::move(n));
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
  const NbdTlsOptions& tls = impl_->options.tls;
  if (tls.mode != TlsMode::kOff && (tls.cert_file.empty() || tls.key_file.empty())) {
    return Status::InvalidArgument("--tls " + std::string(tls.mode == TlsMode::kOn ? "on" : "require") +
                                   " needs --tls-cert and --tls-key");
  }
  if (tls.mode != TlsMode::kOff && impl_->options.listen.rfind("unix:", 0) == 0) {
    return Status::InvalidArgument("--tls on a Unix socket: TLS is for TCP listeners");
  }
  return impl_->server.Start();
}

uint16_t NbdServer::port() const { return impl_->server.port(); }

NbdServerStats NbdServer::stats() const {
  return NbdServerStats{impl_->requests.load(), impl_->most_in_flight.load()};
}

void NbdServer::Stop() { impl_->server.Stop(); }

}  // namespace ferry::nbd
