#include "replay.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <map>
#include <memory>
#include <thread>

#include "nbd/protocol.h"
#include "write_pattern.h"

namespace ferry::replay {

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using boost::system::error_code;

const unsigned char* U(const std::string& s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

uint16_t CommandOf(nbd::TraceOp op) {
  switch (op) {
    case nbd::TraceOp::kRead:
      return nbd::kCmdRead;
    case nbd::TraceOp::kWrite:
      return nbd::kCmdWrite;
    case nbd::TraceOp::kFlush:
      return nbd::kCmdFlush;
    case nbd::TraceOp::kTrim:
      return nbd::kCmdTrim;
    case nbd::TraceOp::kZero:
      return nbd::kCmdWriteZeroes;
    case nbd::TraceOp::kCache:
      return nbd::kCmdCache;
  }
  return nbd::kCmdRead;
}

// One guest: its connection, its requests' progress, its result.
class Guest {
 public:
  Guest(asio::io_context& io, const ReplayOptions& o, const std::vector<nbd::ReplayStep>& plan,
        const GuestSpec& spec, GuestResult* out)
      : o_(o),
        records_(o.trace->records),
        plan_(plan),
        spec_(spec),
        out_(out),
        sock_(io),
        wake_(io),
        deadline_(io),
        sent_at_(records_.size()),
        done_at_(records_.size()),
        done_(records_.size(), false) {}

  asio::awaitable<void> Run(Clock::time_point replay_start) {
    asio::steady_timer t(sock_.get_executor());
    t.expires_at(replay_start + spec_.start);
    error_code ec;
    co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    deadline_.expires_after(o_.timeout);
    deadline_.async_wait([this](error_code e) {
      if (!e) Fail("timed out");
    });
    Clock::time_point t0 = Clock::now();
    if (!co_await Handshake()) {
      Finish();
      co_return;
    }
    out_->connect_ms = Ms(Clock::now() - t0);
    asio::co_spawn(sock_.get_executor(), ReadReplies(), asio::detached);
    co_await SendAll();
    while (!failed_ && answered_ < records_.size()) co_await Sleep(Clock::time_point::max());
    if (!failed_) {
      out_->ok = true;
      out_->boot_ms = records_.empty() ? 0 : Ms(last_reply_ - sent_at_[0]);
    }
    Finish();
  }

 private:
  void Finish() {
    deadline_.cancel();
    error_code ec;
    sock_.close(ec);
    for (auto& [handle, w] : unanswered_writes_) out_->writes.push_back(w);
    unanswered_writes_.clear();
  }

  void Fail(const std::string& why) {
    if (failed_) return;
    failed_ = true;
    out_->error = why;
    error_code ec;
    sock_.close(ec);
    wake_.cancel();
  }
  bool Refuse(const std::string& why) {
    Fail(why);
    return false;
  }

  // Waits until `until` or a reply arrives (wake_ cancelled).
  asio::awaitable<void> Sleep(Clock::time_point until) {
    wake_.expires_at(until);
    error_code ec;
    co_await wake_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }

  asio::awaitable<bool> Handshake() {
    error_code ec;
    auto ok = asio::redirect_error(asio::use_awaitable, ec);
    co_await sock_.async_connect(tcp::endpoint(asio::ip::make_address(spec_.host, ec), spec_.port),
                                 ok);
    if (ec) co_return Refuse("connect: " + ec.message());
    std::string greeting(18, '\0');
    co_await asio::async_read(sock_, asio::buffer(greeting), ok);
    if (ec || nbd::Get64(U(greeting)) != nbd::kNbdMagic) co_return Refuse("no NBD greeting");
    std::string hello;
    nbd::Put32(&hello, nbd::kClientFixedNewstyle | nbd::kClientNoZeroes);
    nbd::Put64(&hello, nbd::kOptMagic);
    nbd::Put32(&hello, nbd::kOptGo);
    nbd::Put32(&hello, static_cast<uint32_t>(4 + spec_.export_name.size() + 2));
    nbd::Put32(&hello, static_cast<uint32_t>(spec_.export_name.size()));
    hello += spec_.export_name;
    nbd::Put16(&hello, 0);
    co_await asio::async_write(sock_, asio::buffer(hello), ok);
    for (;;) {
      std::string head(20, '\0');
      co_await asio::async_read(sock_, asio::buffer(head), ok);
      if (ec) co_return Refuse("handshake: " + ec.message());
      uint32_t type = nbd::Get32(U(head) + 12), length = nbd::Get32(U(head) + 16);
      if (length > nbd::kMaxOptionData) co_return Refuse("handshake: an oversized option reply");
      std::string data(length, '\0');
      co_await asio::async_read(sock_, asio::buffer(data), ok);
      if (ec) co_return Refuse("handshake: " + ec.message());
      if (type == nbd::kRepAck) co_return true;
      if (type != nbd::kRepInfo) co_return Refuse("export " + spec_.export_name + " refused");
    }
  }

  asio::awaitable<void> SendAll() {
    error_code ec;
    for (size_t k = 0; k < records_.size() && !failed_; ++k) {
      const nbd::ReplayStep& step = plan_[k];
      // After the reply the recording had seen, and the think time after it.
      while (!failed_ && step.after >= 0 && !done_[static_cast<size_t>(step.after)]) {
        co_await Sleep(Clock::time_point::max());
      }
      Clock::time_point base = k > 0 ? sent_at_[k - 1] : Clock::now();
      if (step.after >= 0) base = std::max(base, done_at_[static_cast<size_t>(step.after)]);
      auto think = std::chrono::microseconds(
          static_cast<int64_t>(static_cast<double>(step.think_us) * o_.time_scale));
      while (!failed_ && Clock::now() < base + think) co_await Sleep(base + think);
      if (failed_) break;
      const nbd::TraceRecord& r = records_[k];
      nbd::Request req;
      req.type = CommandOf(r.op);
      req.flags = r.fua ? nbd::kCmdFlagFua : 0;
      req.handle = k;
      req.offset = r.offset;
      req.length = static_cast<uint32_t>(r.length);
      std::string wire = nbd::EncodeRequest(req);
      if (r.op == nbd::TraceOp::kWrite || r.op == nbd::TraceOp::kTrim ||
          r.op == nbd::TraceOp::kZero) {
        uint64_t seq = next_write_++;
        if (r.op == nbd::TraceOp::kWrite) {
          wire += WritePayload(spec_.id, seq, r.offset, r.length);
          out_->written_bytes += r.length;
        }
        unanswered_writes_[k] = WriteNote{static_cast<char>(r.op), seq, r.offset, r.length, false};
        written_[r.offset] = std::max(written_[r.offset], r.offset + r.length);
      }
      sent_at_[k] = Clock::now();
      co_await asio::async_write(sock_, asio::buffer(wire),
                                 asio::redirect_error(asio::use_awaitable, ec));
      if (ec) Fail("send: " + ec.message());
    }
  }

  asio::awaitable<void> ReadReplies() {
    error_code ec;
    auto ok = asio::redirect_error(asio::use_awaitable, ec);
    std::string head(16, '\0'), data;
    while (!failed_ && answered_ < records_.size()) {
      co_await asio::async_read(sock_, asio::buffer(head), ok);
      if (ec) {
        Fail("reply: " + ec.message());
        co_return;
      }
      uint64_t k = nbd::Get64(U(head) + 8);
      if (nbd::Get32(U(head)) != nbd::kSimpleReplyMagic || k >= records_.size() || done_[k]) {
        Fail("a malformed reply");
        co_return;
      }
      uint32_t error = nbd::Get32(U(head) + 4);
      const nbd::TraceRecord& r = records_[k];
      if (error != 0) {
        Fail("request " + std::to_string(k) + " failed with NBD error " + std::to_string(error));
        co_return;
      }
      if (r.op == nbd::TraceOp::kRead) {
        data.resize(r.length);
        co_await asio::async_read(sock_, asio::buffer(data), ok);
        if (ec) {
          Fail("read data: " + ec.message());
          co_return;
        }
        CheckRead(r, data);
        out_->read_bytes += r.length;
      }
      Clock::time_point now = Clock::now();
      if (r.op == nbd::TraceOp::kRead)
        out_->read_ms.push_back(static_cast<float>(Ms(now - sent_at_[k])));
      auto w = unanswered_writes_.find(k);
      if (w != unanswered_writes_.end()) {
        w->second.acked = true;
        out_->writes.push_back(w->second);
        if (o_.acked_changes) o_.acked_changes->fetch_add(1, std::memory_order_relaxed);
        unanswered_writes_.erase(w);
      }
      done_[k] = true;
      done_at_[k] = now;
      last_reply_ = now;
      ++answered_;
      ++out_->requests;
      wake_.cancel();
    }
  }

  // Compares a read with the image, unless the guest changed any of it.
  void CheckRead(const nbd::TraceRecord& r, const std::string& data) {
    if (o_.image.empty() || r.offset + r.length > o_.image.size()) return;
    auto it = written_.upper_bound(r.offset + r.length - 1);
    for (auto b = written_.begin(); b != it; ++b) {
      if (b->second > r.offset) return;  // overlaps a write of ours
    }
    ++out_->reads_checked;
    if (o_.image.compare(r.offset, r.length, data) != 0) ++out_->read_mismatches;
  }

  const ReplayOptions& o_;
  const std::vector<nbd::TraceRecord>& records_;
  const std::vector<nbd::ReplayStep>& plan_;
  const GuestSpec spec_;
  GuestResult* out_;
  tcp::socket sock_;
  asio::steady_timer wake_, deadline_;
  std::vector<Clock::time_point> sent_at_, done_at_;
  std::vector<bool> done_;
  size_t answered_ = 0;
  bool failed_ = false;
  Clock::time_point last_reply_;
  uint64_t next_write_ = 0;
  std::map<uint64_t, WriteNote> unanswered_writes_;  // by handle
  std::map<uint64_t, uint64_t> written_;             // ranges the guest changed: offset -> end
};

}  // namespace

std::vector<GuestResult> RunReplay(const ReplayOptions& o) {
  const std::vector<nbd::ReplayStep> plan = nbd::PlanReplay(o.trace->records);
  std::vector<GuestResult> results(o.guests.size());
  const int threads = std::max(1, o.threads);
  std::vector<std::unique_ptr<asio::io_context>> loops;
  for (int t = 0; t < threads; ++t) loops.push_back(std::make_unique<asio::io_context>(1));
  std::vector<std::unique_ptr<Guest>> guests;
  const Clock::time_point start = Clock::now() + std::chrono::milliseconds(100);
  for (size_t i = 0; i < o.guests.size(); ++i) {
    asio::io_context& io = *loops[i % static_cast<size_t>(threads)];
    guests.push_back(std::make_unique<Guest>(io, o, plan, o.guests[i], &results[i]));
    asio::co_spawn(io, guests.back()->Run(start), asio::detached);
  }
  std::vector<std::thread> running;
  for (auto& io : loops) running.emplace_back([&io] { io->run(); });
  for (auto& t : running) t.join();
  return results;
}

}  // namespace ferry::replay
