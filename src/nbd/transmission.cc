// The only nbd files that include Boost.Asio: this one and server.cc.
#include "nbd/transmission.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <spdlog/spdlog.h>

#include <deque>
#include <string>
#include <vector>

#include "nbd/protocol.h"

namespace ferry::nbd {

namespace asio = boost::asio;
using Ec = boost::system::error_code;

namespace {

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

// The bytes a request holds while in flight (its payload or its reply's).
uint64_t CostOf(const Request& r) { return r.type == kCmdRead || r.type == kCmdWrite ? r.length : 0; }

std::string ErrorReply(const Negotiated& n, const Request& r, uint32_t error, const std::string& why) {
  if (n.structured) return EncodeStructuredError(r.handle, error, why);
  return EncodeSimpleReply(error, r.handle);
}

std::string Failed(const Negotiated& n, const Request& r, const Status& st) {
  spdlog::warn("nbd: request {} at {}+{}: {}", r.type, r.offset, r.length, st.ToString());
  return ErrorReply(n, r, ErrnoOf(st), st.ToString());
}

// A READ's reply: simple (header, data), or structured, where the ranges
// the device knows read as zeros go as holes (unless the client said DF).
std::string ReadReply(const Negotiated& n, const Request& r) {
  if (!n.structured) {
    std::string out = EncodeSimpleReply(0, r.handle);
    const size_t head = out.size();
    out.resize(head + r.length);
    Status st = n.dev->Read(r.offset, r.length, out.data() + head);
    return st.ok() ? out : Failed(n, r, st);
  }
  std::string data(r.length, '\0');
  Status st = n.dev->Read(r.offset, r.length, data.data());
  if (!st.ok()) return Failed(n, r, st);
  std::vector<Extent> extents;
  if ((r.flags & kCmdFlagDf) || !n.dev->Extents(r.offset, r.length, &extents).ok()) extents.clear();
  if (extents.empty()) extents.push_back(Extent{r.length, false});
  std::string out;
  uint64_t at = 0;
  for (size_t k = 0; k < extents.size() && at < r.length; ++k) {
    const uint16_t flags = k + 1 == extents.size() ? kReplyFlagDone : 0;
    const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(extents[k].length, r.length - at));
    if (extents[k].zero) {
      out += EncodeOffsetHole(flags, r.handle, r.offset + at, len);
    } else {
      out += EncodeOffsetDataHeader(flags, r.handle, r.offset + at, len);
      out.append(data, at, len);
    }
    at += len;
  }
  return out;
}

std::string BlockStatusReply(const Negotiated& n, const Request& r) {
  std::vector<Extent> extents;
  Status st = n.dev->Extents(r.offset, r.length, &extents);
  if (!st.ok()) return Failed(n, r, st);
  std::vector<BlockStatusDescriptor> out;
  for (const Extent& e : extents) {
    if (e.length == 0) continue;
    out.push_back({static_cast<uint32_t>(e.length), e.zero ? kStateHole | kStateZero : 0u});
    if (r.flags & kCmdFlagReqOne) break;
  }
  return EncodeBlockStatus(r.handle, kBaseAllocationId, out);
}

// Runs a valid request on the device (on a worker thread): its reply.
std::string Execute(const Negotiated& n, const Request& r, const std::string& payload) {
  const bool fua = r.flags & kCmdFlagFua;
  Status st;
  switch (r.type) {
    case kCmdRead:
      return ReadReply(n, r);
    case kCmdBlockStatus:
      return BlockStatusReply(n, r);
    case kCmdWrite:
      st = n.dev->Write(r.offset, payload, fua);
      break;
    case kCmdFlush:
      st = n.dev->Flush();
      break;
    case kCmdTrim:
      st = n.dev->Trim(r.offset, r.length, fua);
      break;
    case kCmdWriteZeroes:
      st = n.dev->WriteZeroes(r.offset, r.length, fua);
      break;
    case kCmdCache:
      st = n.dev->Cache(r.offset, r.length);
      break;
    default:
      st = Status::InvalidArgument("unknown command");
  }
  return st.ok() ? EncodeSimpleReply(0, r.handle) : Failed(n, r, st);
}

// Whether a valid request runs on the ready pool.
bool RunsAtOnce(const Negotiated& n, const Request& r) {
  switch (r.type) {
    case kCmdCache:
      return false;
    case kCmdFlush:
    case kCmdBlockStatus:
      return true;
    default:
      return n.dev->Ready(r.offset, r.length);
  }
}

class Transmission : public std::enable_shared_from_this<Transmission> {
 public:
  Transmission(const TransmissionContext& context, net::Connection& c, Negotiated n)
      : context_(context), options_(*context.options), c_(c), n_(std::move(n)), wake_(c.get_executor()) {}

  asio::awaitable<void> ReadLoop();

  // One request, from its run to its reply's write.
  static asio::awaitable<void> Serve(std::shared_ptr<Transmission> self, Request r,
                                     std::shared_ptr<std::string> payload);

 private:
  struct Pending {
    std::string bytes;
    uint64_t cost = 0;
  };

  bool Full(uint64_t cost) const {
    return inflight_ >= static_cast<uint64_t>(options_.max_requests) ||
           (inflight_ > 0 && bytes_ + cost > options_.max_request_bytes);
  }
  // Until a request finishes (the caller checks its condition again).
  asio::awaitable<void> Wait() {
    Ec ec;
    wake_.expires_at(asio::steady_timer::time_point::max());
    co_await wake_.async_wait(net::AwaitInto(ec));
  }
  asio::awaitable<bool> Recv(std::string* out, size_t n) { return ReadExactly(c_, out, n); }
  // Queues a reply; the first caller to find no write going writes the
  // queue out, gathering what waits into one write.
  asio::awaitable<void> Send(std::string bytes, uint64_t cost);
  void Finish(uint64_t cost);

  const TransmissionContext context_;
  const NbdServerOptions& options_;
  net::Connection& c_;
  const Negotiated n_;
  asio::steady_timer wake_;
  // All on the connection's loop: no locks.
  uint64_t inflight_ = 0;
  uint64_t bytes_ = 0;
  bool reading_ = false;  // the reader waits for the next request
  bool writing_ = false;
  bool broken_ = false;   // a write failed: replies are dropped
  std::deque<Pending> queue_;
};

asio::awaitable<void> Transmission::ReadLoop() {
  std::string head;
  for (;;) {
    while (!broken_ && Full(0)) co_await Wait();
    if (broken_) break;
    // Waiting for a request with none in flight is idle: a stop closes it.
    if (inflight_ == 0 && c_.draining()) break;
    reading_ = true;
    c_.SetIdle(inflight_ == 0);
    const bool got = co_await Recv(&head, kRequestSize);
    reading_ = false;
    c_.SetIdle(false);
    if (!got) break;
    auto r = DecodeRequest(head);
    if (!r.ok() || r->type == kCmdDisc) break;  // a violation, or the client is done
    const uint64_t cost = CostOf(*r);
    auto payload = std::make_shared<std::string>();
    if (r->type == kCmdWrite) {
      if (r->length > kMaxRequestLength) break;  // cannot even read it sanely
      while (!broken_ && Full(cost)) co_await Wait();
      if (broken_ || !co_await Recv(payload.get(), r->length)) break;
    }
    ++inflight_;
    bytes_ += cost;
    context_.requests->fetch_add(1);
    uint64_t most = context_.most_in_flight->load();
    while (inflight_ > most && !context_.most_in_flight->compare_exchange_weak(most, inflight_)) {
    }
    asio::co_spawn(c_.get_executor(), Serve(shared_from_this(), *r, std::move(payload)), asio::detached);
  }
  // Every request started is answered (or dropped with the socket) first.
  while (inflight_ > 0) co_await Wait();
}

asio::awaitable<void> Transmission::Serve(std::shared_ptr<Transmission> self, Request r,
                                          std::shared_ptr<std::string> payload) {
  const uint64_t cost = CostOf(r);
  const Negotiated& n = self->n_;
  std::string reply;
  const uint32_t error = ValidateRequest(r, n.dev->size(), n.tx_flags, n.base_allocation);
  if (error != 0) {
    reply = ErrorReply(n, r, error, "invalid request");
  } else {
    auto run = [self, r, payload] { return Execute(self->n_, r, *payload); };
    if (RunsAtOnce(n, r)) {
      reply = co_await self->context_.server->Blocking(run);
    } else {
      reply = co_await net::Server::RunOn(*self->context_.waiters, run);
    }
  }
  payload.reset();
  co_await self->Send(std::move(reply), cost);
}

asio::awaitable<void> Transmission::Send(std::string bytes, uint64_t cost) {
  if (broken_) {
    Finish(cost);
    co_return;
  }
  queue_.push_back(Pending{std::move(bytes), cost});
  if (writing_) co_return;  // the writer takes it
  writing_ = true;
  constexpr size_t kGather = 64;
  while (!queue_.empty()) {
    std::vector<Pending> batch;
    while (!queue_.empty() && batch.size() < kGather) {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    if (!broken_) {
      std::vector<asio::const_buffer> buffers;
      for (const Pending& p : batch) buffers.push_back(asio::buffer(p.bytes));
      Ec ec;
      c_.Arm(options_.client_timeout);
      co_await asio::async_write(c_, buffers, net::AwaitInto(ec));
      c_.Disarm();
      if (ec) {
        broken_ = true;
        c_.Close();  // the reader's wait fails too
      }
    }
    for (const Pending& p : batch) Finish(p.cost);
  }
  writing_ = false;
}

void Transmission::Finish(uint64_t cost) {
  --inflight_;
  bytes_ -= cost;
  wake_.cancel();
  if (reading_ && inflight_ == 0) {
    c_.SetIdle(true);
    if (c_.draining()) c_.Close();
  }
}

}  // namespace

asio::awaitable<bool> ReadExactly(net::Connection& c, std::string* out, size_t n) {
  out->resize(n);
  if (n == 0) co_return true;
  Ec ec;
  co_await asio::async_read(c, asio::buffer(out->data(), n), net::AwaitInto(ec));
  co_return !ec;
}

asio::awaitable<void> Transmit(const TransmissionContext& context, net::Connection& c, Negotiated n) {
  auto t = std::make_shared<Transmission>(context, c, std::move(n));
  co_await t->ReadLoop();
}

}  // namespace ferry::nbd
