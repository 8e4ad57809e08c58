#include "http/h2_connection.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace ferry::http {
namespace {

namespace asio = boost::asio;
using Ec = boost::system::error_code;
using Clock = H2Session::Clock;

constexpr size_t kReadChunk = 32 << 10;
constexpr size_t kWriteChunk = 128 << 10;
// After the last frame, how long the client's late bytes are read (and
// dropped) so that closing does not reset the connection under the GOAWAY.
constexpr std::chrono::milliseconds kLinger{1000};

// A streamed body's next piece, read on a worker (default-constructible,
// as what co_spawn hands back must be).
struct Piece {
  Status status;
  std::string data;
};

class H2Connection : public std::enable_shared_from_this<H2Connection> {
 public:
  H2Connection(net::Connection& c, const H2Config& config)
      : c_(c),
        config_(config),
        session_(config.limits, c.peer(), Clock::now()),
        wake_(c.get_executor()) {}

  static asio::awaitable<void> Run(std::shared_ptr<H2Connection> self, std::string received) {
    H2Connection& h = *self;
    std::weak_ptr<H2Connection> weak = self;
    h.c_.OnDrain([weak] {
      if (auto s = weak.lock()) s->Drain();
    });
    if (h.c_.draining()) h.Drain();
    if (!received.empty()) h.Feed(received);
    h.UpdateDeadline(true);
    asio::co_spawn(h.c_.get_executor(), ReadLoop(self), asio::detached);
    co_await h.WriteLoop();
    co_await h.Finish();
    h.c_.OnDrain(nullptr);
  }

 private:
  void Wake() {
    woken_ = true;
    wake_.cancel();
  }
  asio::awaitable<void> Sleep() {
    if (!woken_) {
      Ec ec;
      wake_.expires_at(asio::steady_timer::time_point::max());
      co_await wake_.async_wait(net::AwaitInto(ec));
    }
    woken_ = false;
  }

  void Drain() {
    session_.Shutdown();
    Wake();
  }

  void Feed(std::string_view bytes) {
    Status st = session_.Receive(bytes, Clock::now());
    if (!st.ok()) {
      spdlog::debug("HTTP/2 from {}: {}", c_.peer(), st.message());
      closing_ = true;
    }
    Dispatch();
    Wake();
  }

  // The client must make progress within the client timeout whenever we
  // wait for it: a write in flight, or streams open and no work of ours
  // out (`progress`: the wait starts afresh). A connection with no stream
  // and no work is idle: it ends client_timeout after it became so,
  // whatever control frames (PING, SETTINGS) come and go meanwhile.
  void UpdateDeadline(bool progress) {
    if (finishing_) return;
    const auto now = std::chrono::steady_clock::now();
    const bool idle = session_.open_streams() == 0 && busy_ == 0;
    if (!idle) {
      idle_until_.reset();
    } else if (!idle_until_) {
      idle_until_ = now + config_.client_timeout;
    }
    if (idle) {
      c_.Arm(std::max(std::chrono::milliseconds(0),
                      std::chrono::duration_cast<std::chrono::milliseconds>(*idle_until_ - now)));
      armed_ = true;
    } else if (!writing_ && busy_ > 0) {
      if (armed_) c_.Disarm();
      armed_ = false;
    } else if (!armed_ || progress) {
      c_.Arm(config_.client_timeout);
      armed_ = true;
    }
  }

  static asio::awaitable<void> ReadLoop(std::shared_ptr<H2Connection> self) {
    H2Connection& h = *self;
    std::vector<char> buf(kReadChunk);
    for (;;) {
      Ec ec;
      const size_t n = co_await h.c_.async_read_some(asio::buffer(buf), net::AwaitInto(ec));
      if (n > 0 && !h.closing_) {
        h.Feed(std::string_view(buf.data(), n));
        h.UpdateDeadline(!h.writing_);
      }
      if (ec) break;
    }
    h.reading_done_ = true;
    h.Wake();
  }

  asio::awaitable<void> WriteLoop() {
    std::string out;
    for (;;) {
      woken_ = false;  // what woke us is looked at now
      out.clear();
      session_.Send(&out, kWriteChunk);
      if (Dispatch()) woken_ = true;
      if (!out.empty()) {
        Ec ec;
        writing_ = true;
        UpdateDeadline(true);
        co_await asio::async_write(c_, asio::buffer(out), net::AwaitInto(ec));
        writing_ = false;
        UpdateDeadline(true);
        if (ec) co_return;
        continue;
      }
      if (session_.Done() || closing_ || reading_done_) break;
      co_await Sleep();
    }
    // The last frame is out: half close, and read what the client still
    // sends until it closes too (or a moment passes).
    closing_ = true;
    finishing_ = true;
    c_.ShutdownSend();
    c_.Arm(std::min(config_.client_timeout, kLinger));
    while (!reading_done_) co_await Sleep();
  }

  // Closes the socket, then waits for the read loop and for every worker
  // call of this connection (their answers go nowhere).
  asio::awaitable<void> Finish() {
    finishing_ = true;
    c_.Close();
    while (!reading_done_ || busy_ + cancelling_ > 0) co_await Sleep();
  }

  // Acts on the session's events; whether there were any. The caller
  // wakes the write loop.
  bool Dispatch() {
    bool any = false;
    for (auto events = session_.TakeEvents(); !events.empty(); events = session_.TakeEvents()) {
      any = true;
      for (auto& e : events) Act(std::move(e));
    }
    return any;
  }

  void Act(H2Session::Event e) {
    using Kind = H2Session::Event::Kind;
    switch (e.kind) {
      case Kind::kRequest:
        StartRequest(e.stream, std::move(e.request));
        break;
      case Kind::kNeedBody:
        ++busy_;
        asio::co_spawn(c_.get_executor(),
                       ReadOnWorker(shared_from_this(), e.stream, std::move(e.reader), e.max),
                       asio::detached);
        break;
      case Kind::kCancelBody:
        StartCancel(std::move(e.reader));
        break;
      case Kind::kClosed:
        if (auto it = cancels_.find(e.stream); it != cancels_.end()) it->second->store(true);
        break;
    }
  }

  // HandleInline on the loop; else Handle on a worker.
  void StartRequest(int32_t id, ServerRequest req) {
    req.tls = c_.tls();
    std::optional<ServerResponse> r = config_.handler->HandleInline(req);
    if (r) {
      session_.Respond(id, std::move(*r));
      return;
    }
    auto cancelled = std::make_shared<std::atomic<bool>>(false);
    cancels_[id] = cancelled;
    ++busy_;
    UpdateDeadline(false);
    auto shared = std::make_shared<const ServerRequest>(std::move(req));
    asio::co_spawn(c_.get_executor(),
                   HandleOnWorker(shared_from_this(), id, std::move(shared), std::move(cancelled)),
                   asio::detached);
  }

  static asio::awaitable<void> HandleOnWorker(std::shared_ptr<H2Connection> self, int32_t id,
                                              std::shared_ptr<const ServerRequest> req,
                                              std::shared_ptr<std::atomic<bool>> cancelled) {
    Handler* handler = self->config_.handler;
    auto handle = [handler, req, cancelled]() -> std::optional<ServerResponse> {
      if (cancelled->load()) return std::nullopt;  // reset before its turn came
      return handler->Handle(*req);
    };
    std::optional<ServerResponse> r = co_await self->config_.server->Blocking(handle);
    H2Connection& h = *self;
    --h.busy_;
    h.cancels_.erase(id);
    if (r) {
      h.session_.Respond(id, std::move(*r));
    } else {
      h.session_.Abandon(id);
    }
    h.Dispatch();
    h.Wake();
    h.UpdateDeadline(false);
  }

  static asio::awaitable<void> ReadOnWorker(std::shared_ptr<H2Connection> self, int32_t id,
                                            std::shared_ptr<BodyReader> reader, size_t max) {
    auto read = [reader, max]() -> Piece {
      auto r = reader->Read(max);
      if (!r.ok()) return Piece{r.status(), ""};
      return Piece{Status::Ok(), std::move(r).value()};
    };
    Piece piece = co_await self->config_.server->Blocking(read);
    H2Connection& h = *self;
    --h.busy_;
    if (!piece.status.ok()) {
      h.session_.FailBody(id);
      h.StartCancel(std::move(reader));  // as HTTP/1.1 does after a failed read
    } else {
      const bool end = piece.data.empty();
      if (!h.session_.AddBody(id, std::move(piece.data)) && !end) h.StartCancel(std::move(reader));
    }
    h.Dispatch();
    h.Wake();
    h.UpdateDeadline(false);
  }

  void StartCancel(std::shared_ptr<BodyReader> reader) {
    ++cancelling_;
    asio::co_spawn(c_.get_executor(), CancelOnWorker(shared_from_this(), std::move(reader)),
                   asio::detached);
  }

  static asio::awaitable<void> CancelOnWorker(std::shared_ptr<H2Connection> self,
                                              std::shared_ptr<BodyReader> reader) {
    auto cancel = [reader] { reader->Cancel(); };
    co_await self->config_.server->Blocking(cancel);
    --self->cancelling_;
    self->Wake();
  }

  net::Connection& c_;
  const H2Config& config_;
  H2Session session_;
  asio::steady_timer wake_;  // the write loop's sleep; Wake() ends it
  bool woken_ = false;
  bool reading_done_ = false;
  bool closing_ = false;    // no more frames are read in: the end is near
  bool finishing_ = false;  // deadlines are the ending's own
  bool writing_ = false;
  bool armed_ = false;
  std::optional<std::chrono::steady_clock::time_point> idle_until_;  // while idle
  size_t busy_ = 0;        // requests and body reads on workers
  size_t cancelling_ = 0;  // BodyReader::Cancel calls on workers
  // Set when a request's stream closes: its Handle is skipped if not begun.
  std::map<int32_t, std::shared_ptr<std::atomic<bool>>> cancels_;
};

}  // namespace

asio::awaitable<void> ServeH2(net::Connection& c, const H2Config& config, std::string received) {
  auto h = std::make_shared<H2Connection>(c, config);
  co_await H2Connection::Run(std::move(h), std::move(received));
}

}  // namespace ferry::http
