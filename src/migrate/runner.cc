#include "migrate/runner.h"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "base/unix_time.h"
#include "base/cancel.h"
#include "base/crash_point.h"
#include "engine/byte_budget.h"
#include "engine/circuit_breaker.h"
#include "engine/pacer.h"
#include "engine/rate_limiter.h"
#include "migrate/job_spec.h"
#include "migrate/lister.h"
#include "migrate/policy.h"
#include "migrate/transfer.h"
#include "store/location.h"

namespace ferry::migrate {
namespace {

using Clock = std::chrono::steady_clock;

double Random01() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

// What an endpoint's requests report to: its pacer (throttling), the job's
// request-rate limit, and its circuit breaker (health).
class EndpointHooks : public RequestHooks {
 public:
  EndpointHooks(Pacer* pacer, RateLimiter* tps, CircuitBreaker* circuit)
      : pacer_(pacer), tps_(tps), circuit_(circuit) {}
  std::chrono::nanoseconds BeforeRequest() override {
    if (tps_->unlimited()) return {};
    return tps_->Reserve(1, RateLimiter::Clock::now());
  }
  void AfterRequest(const Status& s) override {
    if (s.code() == ErrorCode::kThrottled) {
      pacer_->OnThrottle();
    } else if (s.ok()) {
      pacer_->OnSuccess();
    }
    // Any answer but an outage shows the endpoint is up (a 404 too).
    if (IsOutageError(s)) {
      circuit_->OnFailure(s);
    } else if (s.code() != ErrorCode::kThrottled) {
      circuit_->OnSuccess();
    }
  }

 private:
  Pacer* pacer_;
  RateLimiter* tps_;
  CircuitBreaker* circuit_;
};

// A bounded queue of claimed objects between the dispatcher and the
// transfers, in two lines: objects for the worker threads (Pop() waits for
// one), and objects for the asynchronous route, which LaunchAsync() takes
// without waiting. The bound is on both together.
class WorkQueue {
 public:
  explicit WorkQueue(size_t capacity) : capacity_(capacity) {}
  void Push(state::ClaimedObject o) {
    std::lock_guard<std::mutex> lock(mu_);
    q_.push_back(std::move(o));
    cv_.notify_one();
  }
  // `front`: one taken a moment ago and put back (it goes next).
  void PushAsync(state::ClaimedObject o, bool front = false) {
    std::lock_guard<std::mutex> lock(mu_);
    if (front) {
      async_.push_front(std::move(o));
    } else {
      async_.push_back(std::move(o));
    }
  }
  // Blocks until an object for a thread or Close(); false when closed and
  // drained.
  bool Pop(state::ClaimedObject* out) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !q_.empty() || closed_; });
    if (q_.empty()) return false;
    *out = std::move(q_.front());
    q_.pop_front();
    Popped();
    return true;
  }
  bool TryPopAsync(state::ClaimedObject* out) {
    std::lock_guard<std::mutex> lock(mu_);
    if (async_.empty()) return false;
    *out = std::move(async_.front());
    async_.pop_front();
    Popped();
    return true;
  }
  // Room for more, waiting up to `wait` for some to appear.
  size_t Room(std::chrono::milliseconds wait) {
    std::unique_lock<std::mutex> lock(mu_);
    space_.wait_for(lock, wait, [&] { return size() < capacity_ / 2 || closed_; });
    return size() >= capacity_ ? 0 : capacity_ - size();
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    cv_.notify_all();
    space_.notify_all();
  }

 private:
  size_t size() const { return q_.size() + async_.size(); }
  // The dispatcher waits for the queue to fall below half: wake it when a
  // pop crosses that line, not on every pop (each wake-up was a context
  // switch per object for a dispatcher that went back to sleep).
  void Popped() {
    if (size() + 1 == capacity_ / 2) space_.notify_all();
  }

  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable cv_, space_;
  std::deque<state::ClaimedObject> q_;      // guarded by mu_
  std::deque<state::ClaimedObject> async_;  // guarded by mu_
  bool closed_ = false;                     // guarded by mu_
};

class Runner {
 public:
  Runner(state::StateStore& store, std::string id, const RunOptions& o)
      : store_(store), id_(std::move(id)), opt_(o), runner_(NewRunnerId()) {}
  // The stores first: closing them joins their event loops, where the tail
  // of a transfer's callback may still touch the pacers, queue and pools.
  ~Runner() {
    dst_.reset();
    src_.reset();
  }

  Result<RunResult> Run();

 private:
  Status Setup();
  void Dispatch();
  void Work();
  // Where a transfer's result goes: committed, retried or dead-lettered.
  // `on_loop`: called on a store's event loop, which must not block, so a
  // failure is handed to HandleFailures().
  void Finished(const state::ClaimedObject& obj, TransferResult r, bool on_loop);
  // Starts queued asynchronous transfers while slots, circuits and the
  // buffer budget let them start at once; never waits. Called wherever one
  // of those may have freed up: a transfer ending, the dispatcher's rounds.
  void LaunchAsync();
  void HandleFailures();
  void Commit();
  void HandleFailure(const state::ClaimedObject& obj, const TransferResult& r);
  void Emit(const Event& e) {
    if (opt_.on_event) {
      std::lock_guard<std::mutex> lock(event_mu_);
      opt_.on_event(e);
    }
  }
  CircuitBreaker& CircuitFor(Side s) {
    return s == Side::kSource ? src_circuit_ : s == Side::kDestination ? dst_circuit_ : state_circuit_;
  }
  // May a new transfer start? Consults only circuits that are not closed, so
  // a half-open circuit's single probe is taken only when it can run.
  bool Admit();
  // Runs a state-store write until it succeeds or the run is stopping; the
  // state circuit sees every failure.
  template <typename F>
  auto WithState(F f) -> decltype(f());
  std::string CircuitText();
  void Report(const state::JobRecord& job, Clock::time_point start, int64_t done0, int64_t bytes0);
  bool Stopping() const { return stop_.load() || CancelRequested(); }

  state::StateStore& store_;
  std::string id_;
  RunOptions opt_;
  std::string runner_;
  JobSpec spec_;
  state::JobRecord job_;
  std::unique_ptr<ObjectStore> src_, dst_;
  TransferContext ctx_;

  std::unique_ptr<Pacer> src_pacer_, dst_pacer_;
  // A lost probe (its object was released) is replaced after 5 s.
  static CircuitOptions Circuits() {
    CircuitOptions o;
    o.probe_timeout = std::chrono::milliseconds(5000);
    return o;
  }
  CircuitBreaker src_circuit_{Circuits()}, dst_circuit_{Circuits()}, state_circuit_{Circuits()};
  // Writes stop half a lease before this runner's leases may lapse.
  LeaseFence fence_{0, opt_.lease.count() / 2};
  std::unique_ptr<RateLimiter> tps_, bw_;
  std::unique_ptr<ByteBudget> budget_;
  std::unique_ptr<BufferPool> buffers_;  // recycles large buffers within the budget
  std::unique_ptr<WorkQueue> queue_;

  // A pool job (spec_.pool): this runner holds the listing lease (the
  // job's runner claim). Always true for other jobs. Monitor thread only.
  bool lister_ = true;
  bool over_ = false;  // a pool job that was already finished at Setup
  std::atomic<bool> stop_{false};         // the run is ending: no new work
  std::atomic<bool> list_stop_{false};    // the listing stops (stop_, or the lease lost)
  std::atomic<bool> listing_done_{false};
  std::atomic<double> listing_seconds_{0};  // this run's listing, once done
  bool src_loc_remote_ = false;             // the source is an object store
  std::atomic<int64_t> pending_{0};       // keys in the state store (estimate)
  std::atomic<int64_t> in_flight_{0};
  std::mutex event_mu_;
  static constexpr int kMaxConsecutiveDead = 500;
  std::atomic<int> consecutive_dead_{0};
  std::mutex fatal_mu_;
  Status fatal_;  // guarded by fatal_mu_: what ended the run early

  std::mutex failed_mu_;
  std::condition_variable failed_cv_;
  std::deque<std::pair<state::ClaimedObject, TransferResult>> failed_;  // guarded by failed_mu_
  bool failed_closed_ = false;                                         // guarded by failed_mu_
  std::atomic<int> failures_waiting_{0};  // in failed_ or being recorded

  std::mutex commit_mu_;
  std::condition_variable commit_cv_;
  std::vector<state::FinishedObject> commit_buf_;  // guarded by commit_mu_
  bool commit_closed_ = false;                     // guarded by commit_mu_
};

std::string Runner::CircuitText() {
  std::string out;
  auto add = [&](const char* name, CircuitBreaker& c) {
    if (c.state() == CircuitState::kClosed) return;
    if (!out.empty()) out += ", ";
    out += std::string(name) + " " + ToString(c.state());
  };
  add("source", src_circuit_);
  add("destination", dst_circuit_);
  add("state store", state_circuit_);
  return out;
}

bool Runner::Admit() {
  // Look first, then take probes: a probe taken from one circuit while
  // another refuses would be wasted (it times out, see CircuitOptions).
  const std::array<CircuitBreaker*, 3> all = {&state_circuit_, &dst_circuit_, &src_circuit_};
  for (CircuitBreaker* c : all) {
    if (!c->WouldAllow()) return false;
  }
  for (CircuitBreaker* c : all) {
    if (c->state() != CircuitState::kClosed && !c->Allow()) return false;
  }
  return true;
}

template <typename F>
auto Runner::WithState(F f) -> decltype(f()) {
  for (int attempt = 1;; ++attempt) {
    auto r = f();
    if (r.ok()) {
      state_circuit_.OnSuccess();
      return r;
    }
    state_circuit_.OnFailure(r.status());
    if (!r.status().retryable() || (CancelRequested() && attempt > 3) || attempt >= 60) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(1000, 50 * attempt)));
  }
}

Status Runner::Setup() {
  FERRY_ASSIGN_OR_RETURN(job_, store_.GetJob(id_));
  FERRY_ASSIGN_OR_RETURN(spec_, SpecFromJson(job_.spec));
  if (spec_.pool && state::IsFinal(job_.state)) {
    over_ = true;  // another runner finished it: nothing to do
    return Status::Ok();
  }
  int64_t now = NowUnixMs();
  bool dead = !job_.runner.empty() && RunnerIsDead(job_.runner);
  Status got = store_.AcquireJob(id_, runner_, now, now + opt_.lease.count(), opt_.force || dead);
  if (spec_.pool && got.code() == ErrorCode::kNotFound) {
    // Finished and archived by another runner since the read above.
    auto again = store_.GetJob(id_);
    if (again.ok() && again->archived) {
      over_ = true;
      return Status::Ok();
    }
  }
  if (spec_.pool && got.code() == ErrorCode::kPreconditionFailed) {
    lister_ = false;  // another runner lists; this one transfers beside it
  } else if (!got.ok()) {
    return got;
  }
  // The previous runner is gone: its leases are void now, not at expiry.
  // (In the pool the holder of the listing may be alive and transferring.)
  if (lister_ && !job_.runner.empty() && job_.runner != runner_ && (!spec_.pool || dead)) {
    FERRY_RETURN_IF_ERROR(store_.ReleaseOwner(id_, job_.runner).status());
  }
  FERRY_ASSIGN_OR_RETURN(job_, store_.GetJob(id_));

  FERRY_ASSIGN_OR_RETURN(Location src_loc, ParseLocation(spec_.src));
  FERRY_ASSIGN_OR_RETURN(Location dst_loc, ParseLocation(spec_.dst));
  // Gentle AIMD: throttles that arrive at random (not from overload) must
  // not collapse the limit, yet a storm of them (few successes) still does.
  PacerOptions po;
  po.max = spec_.concurrency;
  po.increase_every = 4;
  po.decrease = 0.75;
  src_pacer_ = std::make_unique<Pacer>(po);
  dst_pacer_ = std::make_unique<Pacer>(po);
  tps_ = std::make_unique<RateLimiter>(spec_.tps_limit);
  bw_ = std::make_unique<RateLimiter>(spec_.bwlimit);
  budget_ = std::make_unique<ByteBudget>(opt_.buffer_budget);
  buffers_ = std::make_unique<BufferPool>(opt_.buffer_budget);

  // Each side: its profile, its pacer and circuit, and a pooled connection
  // for every request that can be in flight (with the default of 64 and 256
  // in flight the pool reopened 1,200 connections per 30,000 objects).
  auto side = [&](const std::string& profile, Pacer* pacer, CircuitBreaker* circuit) {
    OpenOptions o = opt_.open;
    o.profile = profile;
    o.hooks = std::make_shared<EndpointHooks>(pacer, tps_.get(), circuit);
    o.http.max_idle_per_endpoint =
        std::max<size_t>(o.http.max_idle_per_endpoint,
                         static_cast<size_t>(spec_.concurrency) *
                             static_cast<size_t>(std::max(1, spec_.part_concurrency)));
    o.http.io_threads = std::max(o.http.io_threads, 2);
    return o;
  };
  OpenOptions so = side(spec_.src_profile, src_pacer_.get(), &src_circuit_);
  FERRY_ASSIGN_OR_RETURN(src_, OpenStore(src_loc, so));
  OpenOptions dopt = side(spec_.dst_profile, dst_pacer_.get(), &dst_circuit_);
  dopt.create_local = true;
  FERRY_ASSIGN_OR_RETURN(dst_, OpenStore(dst_loc, dopt));

  ctx_.src = src_.get();
  ctx_.dst = dst_.get();
  ctx_.state = &store_;
  ctx_.job = id_;
  ctx_.spec = spec_;
  ctx_.keys = KeyMapFor(src_loc, dst_loc);
  src_loc_remote_ = src_loc.is_remote();
  ctx_.same_store = src_loc.is_remote() && dst_loc.is_remote() &&
                    spec_.src_profile == spec_.dst_profile &&
                    StoreIdentity(src_loc, so) == StoreIdentity(dst_loc, dopt);
  ctx_.job_started_ms = job_.started_ms;
  ctx_.bwlimit = bw_.get();
  ctx_.budget = budget_.get();
  ctx_.buffers = buffers_.get();
  ctx_.fence = &fence_;
  pending_ = job_.counters.pending;
  queue_ = std::make_unique<WorkQueue>(static_cast<size_t>(std::max(8, spec_.concurrency * 2)));
  return Status::Ok();
}

void Runner::Dispatch() {
  while (!Stopping()) {
    LaunchAsync();  // also after a wait on an open circuit or a full budget
    size_t room = queue_->Room(std::chrono::milliseconds(50));
    if (room == 0 || Stopping()) continue;
    if (state_circuit_.state() != CircuitState::kClosed && !state_circuit_.Allow()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    int64_t now = NowUnixMs();
    int want = static_cast<int>(std::min<size_t>(room, static_cast<size_t>(opt_.claim_batch)));
    const int64_t lease_until = now + opt_.lease.count();
    auto claimed = store_.Claim(id_, runner_, want, now, lease_until);
    if (!claimed.ok()) {
      state_circuit_.OnFailure(claimed.status());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    state_circuit_.OnSuccess();
    if (claimed->empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(listing_done_ ? 50 : 20));
      continue;
    }
    for (auto& c : *claimed) {
      c.lease_until_ms = lease_until;
      if (CanTransferAsync(ctx_, c)) {
        queue_->PushAsync(std::move(c));
      } else {
        queue_->Push(std::move(c));
      }
    }
    LaunchAsync();
  }
}

void Runner::Work() {
  state::ClaimedObject obj;
  while (queue_->Pop(&obj)) {
    if (Stopping()) continue;  // its lease is released with the rest at the end
    // Wait for the circuits to let new work through; meanwhile the object
    // stays leased to us (renewed), so nothing else takes it.
    while (!Admit() && !Stopping()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (Stopping() || !src_pacer_->Acquire(&stop_)) {
      (void)WithState([&] { return store_.Release(id_, runner_, obj.object.key, 0); });
      continue;
    }
    if (!dst_pacer_->Acquire(&stop_)) {
      src_pacer_->Release();
      (void)WithState([&] { return store_.Release(id_, runner_, obj.object.key, 0); });
      continue;
    }
    ++in_flight_;
    Finished(obj, TransferObject(ctx_, obj), /*on_loop=*/false);
  }
}

void Runner::LaunchAsync() {
  for (;;) {
    // Counted in flight before anything else: the shutdown's wait for
    // in_flight_ to drain then either sees this transfer, or this sees stop_.
    ++in_flight_;
    auto not_started = [&] { --in_flight_; };
    // Failures not yet recorded hold no slot, so they are bounded here: a
    // state store that is slow to take them stops new transfers, as a
    // worker thread busy recording one would.
    if (Stopping() || failures_waiting_.load() >= spec_.concurrency) return not_started();
    if (!src_pacer_->TryAcquire()) return not_started();
    if (!dst_pacer_->TryAcquire()) {
      src_pacer_->Release();
      return not_started();
    }
    uint64_t taken = 0;
    auto give_back = [&] {
      if (ctx_.budget != nullptr && taken > 0) ctx_.budget->Release(taken);
      dst_pacer_->Release();
      src_pacer_->Release();
      not_started();
    };
    state::ClaimedObject obj;
    if (!queue_->TryPopAsync(&obj)) return give_back();
    // The buffer, then the circuits: a half-open circuit's one probe is
    // taken only for a transfer that starts.
    bool fits = ctx_.budget == nullptr || ctx_.budget->TryAcquire(obj.object.size, &taken);
    if (!fits || !Admit()) {  // a transfer ending frees bytes; the dispatcher's rounds retry
      queue_->PushAsync(std::move(obj), /*front=*/true);
      return give_back();
    }
    TransferObjectAsync(ctx_, obj, taken, [this, obj](TransferResult r) {
      Finished(obj, std::move(r), /*on_loop=*/true);
    });
  }
}

void Runner::Finished(const state::ClaimedObject& obj, TransferResult r, bool on_loop) {
  dst_pacer_->Release();
  src_pacer_->Release();
  if (r.status.ok()) {
    consecutive_dead_ = 0;
    src_circuit_.OnSuccess();
    dst_circuit_.OnSuccess();
    {
      std::lock_guard<std::mutex> lock(commit_mu_);
      commit_buf_.push_back({obj.object.key, r.outcome, r.bytes});
      if (commit_buf_.size() >= 512) commit_cv_.notify_one();
    }
  } else if (on_loop && NeedsThreadRoute(r)) {
    queue_->Push(obj);  // a worker thread copies it by the route its size needs now
  } else if (on_loop) {
    // The state store is not written from an event loop: a thread does it.
    std::lock_guard<std::mutex> lock(failed_mu_);
    failed_.emplace_back(obj, std::move(r));
    ++failures_waiting_;
    failed_cv_.notify_one();
  } else {
    HandleFailure(obj, r);
  }
  --in_flight_;  // after the object's next home is set: the monitor reads this
  // Its slots are free: the next asynchronous transfer starts here, on this
  // thread, with no thread woken for it.
  LaunchAsync();
}

void Runner::HandleFailures() {
  std::unique_lock<std::mutex> lock(failed_mu_);
  for (;;) {
    failed_cv_.wait(lock, [&] { return !failed_.empty() || failed_closed_; });
    if (failed_.empty()) return;
    auto [obj, r] = std::move(failed_.front());
    failed_.pop_front();
    lock.unlock();
    HandleFailure(obj, r);
    --failures_waiting_;
    LaunchAsync();  // transfers may have waited for this one to be recorded
    lock.lock();
  }
}

void Runner::HandleFailure(const state::ClaimedObject& obj, const TransferResult& r) {
  CircuitBreaker& circuit = CircuitFor(r.side);
  circuit.OnFailure(r.status);
  bool outage = IsOutageError(r.status) && circuit.state() != CircuitState::kClosed;
  RetryPolicy backoff;
  backoff.base = std::chrono::milliseconds(200);
  backoff.cap = std::chrono::milliseconds(10'000);
  FailurePlan plan = PlanFailure(r.status, obj.attempts, spec_.max_attempts, outage, backoff,
                                 Random01());
  const std::string& key = obj.object.key;
  std::string error = std::string(ToString(r.side)) + ": " + r.status.ToString();
  int64_t now = NowUnixMs();
  switch (plan.action) {
    case FailureAction::kRetry:
      (void)WithState([&] { return store_.Retry(id_, runner_, key, error, now + plan.delay_ms); });
      break;
    case FailureAction::kRelease:
      (void)WithState([&] { return store_.Release(id_, runner_, key, now + plan.delay_ms); });
      break;
    case FailureAction::kDeadLetter: {
      (void)AbandonUpload(ctx_, key);
      state::DeadLetter d;
      d.key = key;
      d.size = obj.object.size;
      d.reason = plan.reason;
      if (r.status.code() == ErrorCode::kNotFound && r.side != Side::kSource) {
        d.reason = "not found at the " + std::string(ToString(r.side));
      }
      // Everything failing for good, with no success between (a bucket gone,
      // credentials revoked): stop rather than dead-letter the whole job.
      if (++consecutive_dead_ >= kMaxConsecutiveDead) {
        std::lock_guard<std::mutex> lock(fatal_mu_);
        if (fatal_.ok()) {
          fatal_ = r.status.WithContext(std::to_string(kMaxConsecutiveDead) +
                                        " objects in a row failed for good; stopping (last: " +
                                        key + ")");
        }
        stop_ = true;
      }
      d.attempts = obj.attempts + 1;
      d.last_error = error;
      d.at_ms = now;
      auto moved = WithState([&] { return store_.DeadLetterObject(id_, runner_, d); });
      if (moved.ok() && *moved) {
        --pending_;
        Emit({Event::Kind::kDeadLetter, key, d.reason, error, d.attempts});
      }
      break;
    }
  }
}

void Runner::Commit() {
  std::vector<state::FinishedObject> batch;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(commit_mu_);
      commit_cv_.wait_for(lock, std::chrono::milliseconds(20),
                          [&] { return commit_buf_.size() >= 512 || commit_closed_; });
      if (commit_buf_.empty() && batch.empty()) {
        if (commit_closed_) return;
        continue;
      }
      for (auto& f : commit_buf_) batch.push_back(std::move(f));
      commit_buf_.clear();
    }
    auto counted = WithState([&] { return store_.Finish(id_, runner_, batch); });
    if (!counted.ok()) {
      // The state store is gone for now; keep the batch (Finish is
      // idempotent for its owner) while the run goes on. Once it is over the
      // batch is left: those keys' leases lapse, and the next run finds the
      // copies (the last guard) and counts them as skipped.
      std::unique_lock<std::mutex> lock(commit_mu_);
      if (commit_closed_ || CancelRequested()) return;
      commit_cv_.wait_for(lock, std::chrono::milliseconds(500), [&] { return commit_closed_; });
      continue;
    }
    for (bool c : *counted) pending_ -= c ? 1 : 0;
    batch.clear();
    CrashPoint("finish");
  }
}

void Runner::Report(const state::JobRecord& job, Clock::time_point start, int64_t done0,
                    int64_t bytes0) {
  if (!opt_.on_progress) return;
  Progress p;
  p.counters = job.counters;
  p.in_flight = in_flight_.load();
  p.listing_done = job.listing_done;
  p.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  int64_t done = job.counters.transferred + job.counters.skipped - done0;
  if (p.seconds > 0) {
    p.objects_per_s = static_cast<double>(done) / p.seconds;
    p.bytes_per_s = static_cast<double>(job.counters.bytes - bytes0) / p.seconds;
  }
  p.circuits = CircuitText();
  p.src_limit = src_pacer_->limit();
  p.dst_limit = dst_pacer_->limit();
  p.throttles = src_pacer_->throttles() + dst_pacer_->throttles();
  opt_.on_progress(p);
}

Result<RunResult> Runner::Run() {
  if (Status s = Setup(); !s.ok()) {
    // Taken but not runnable (a store that does not open): give it back.
    auto job = store_.GetJob(id_);
    if (job.ok() && job->runner == runner_) {
      (void)store_.SetJobState(id_, state::JobState::kInterrupted, NowUnixMs(), 0, true);
    }
    return s;
  }
  if (over_) {
    RunResult done;
    done.job = job_;
    return done;
  }
  auto start = Clock::now();
  fence_.Renewed(NowUnixMs() + opt_.lease.count());  // every claim comes after this
  int64_t done0 = job_.counters.transferred + job_.counters.skipped;
  int64_t bytes0 = job_.counters.bytes;
  // An earlier run may have been cancelled mid-way; this one is a resume.
  Status listing_status;
  std::thread lister;
  auto start_lister = [&] { lister = std::thread([&] {
    ListerContext lc;
    lc.src = src_.get();
    lc.state = &store_;
    lc.job = id_;
    lc.keys = ctx_.keys;
    lc.filter = spec_.filter;
    lc.filter_prefix = spec_.filter_prefix;
    lc.unchanged_before_ms = spec_.since_ms;
    lc.top_level_only = spec_.top_level_only;
    lc.list_concurrency = spec_.list_concurrency;
    lc.check_known_keys = src_loc_remote_;
    lc.page_size = spec_.list_chunk;
    lc.stop = &list_stop_;
    lc.wait_for_room = [&] {
      // Also when the listing lease is lost meanwhile: the monitor may be
      // joining this thread to list again itself.
      while (pending_.load() >= opt_.max_pending) {
        if (Stopping() || list_stop_) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      return !Stopping() && !list_stop_;
    };
    lc.on_page = [&](int64_t n) { pending_ += n; };
    lc.on_warning = [&](const std::string& w) { Emit({Event::Kind::kWarning, "", "", w, 0}); };
    listing_status = RunListing(lc);
    if (listing_status.ok() && !Stopping() && !list_stop_) listing_done_ = true;
    if (!listing_status.ok()) stop_ = true;
  }); };
  if (lister_) start_lister();
  std::thread dispatcher([&] { Dispatch(); });
  std::thread committer([&] { Commit(); });
  std::thread failures([&] { HandleFailures(); });
  std::vector<std::thread> workers;
  for (int i = 0; i < spec_.concurrency; ++i) workers.emplace_back([&] { Work(); });

  // The monitor.
  Status run_status;
  bool taken_over = false;
  state::JobState final_state = state::JobState::kRunning;
  auto last_renew = Clock::now();
  auto last_report = Clock::time_point{};
  std::string circuits;
  bool listing_announced = job_.listing_done;
  while (true) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (CancelRequested() || stop_) break;
    auto now = Clock::now();
    if (now - last_renew >= opt_.lease / 4) {
      const int64_t now_ms = NowUnixMs();
      const int64_t until = now_ms + opt_.lease.count();
      if (lister_) {
        Status renewed = store_.RenewJob(id_, runner_, until);
        if (renewed.code() == ErrorCode::kPreconditionFailed && !spec_.pool) {
          run_status = renewed.WithContext("job taken over by another runner");
          taken_over = true;
          break;
        }
        if (renewed.code() == ErrorCode::kPreconditionFailed) {
          // Our lease lapsed and another runner of the pool lists now (it
          // goes on from the last committed page): stop ours.
          lister_ = false;
          list_stop_ = true;
        }
      } else if (spec_.pool && !job_.listing_done &&
                 (job_.runner.empty() || job_.runner_until_ms <= now_ms)) {
        // The runner that listed is gone: take the listing over.
        if (store_.AcquireJob(id_, runner_, now_ms, until, false).ok()) {
          if (lister.joinable()) lister.join();
          list_stop_ = false;
          lister_ = true;
          start_lister();
        }
      }
      if (store_.RenewLeases(id_, runner_, until).ok()) fence_.Renewed(until);
      last_renew = now;
    }
    if (now - last_report < std::chrono::milliseconds(100)) continue;
    auto job = store_.GetJob(id_);
    if (job.ok()) {
      state_circuit_.OnSuccess();
    } else {
      state_circuit_.OnFailure(job.status());
    }
    // Reported also while the state store is away: that is when it opens.
    std::string c = CircuitText();
    if (c != circuits) {
      Emit({Event::Kind::kCircuit, "", c.empty() ? "closed" : c, "", 0});
      circuits = c;
    }
    if (!job.ok()) continue;
    job_ = *job;
    // In the pool, other runners finish keys too: the listing's
    // back-pressure follows the shared count.
    if (spec_.pool) pending_ = job_.counters.pending;
    if (spec_.pool && state::IsFinal(job_.state)) {
      final_state = job_.state;  // another runner of the pool ended it
      break;
    }
    if (job_.listing_done && !listing_announced) {
      listing_announced = true;
      listing_seconds_ = std::chrono::duration<double>(now - start).count();
      Emit({Event::Kind::kListingDone, "", "", "", 0});
    }
    if (job_.state == state::JobState::kCancelling) {
      final_state = state::JobState::kCancelled;
      break;
    }
    if (now - last_report >= opt_.progress_every) {
      Report(job_, start, done0, bytes0);
      last_report = now;
    }
    // A runner that lists ends the job only once its listing returned: a
    // late finding (a broken promise) may still replace the listing.
    if (job_.listing_done && job_.counters.pending == 0 && in_flight_ == 0 &&
        (!lister_ || listing_done_)) {
      final_state = job_.counters.failed > 0 ? state::JobState::kFailed
                                             : state::JobState::kCompleted;
      break;
    }
  }

  stop_ = true;
  list_stop_ = true;
  queue_->Close();
  if (lister.joinable()) lister.join();
  dispatcher.join();
  for (auto& w : workers) w.join();
  // Transfers still in flight on the stores' loops end soon (a cancelled
  // run's reads stop at their next buffer; retries skip their waits).
  while (in_flight_.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  {
    std::lock_guard<std::mutex> lock(failed_mu_);
    failed_closed_ = true;
    failed_cv_.notify_all();
  }
  failures.join();
  {
    std::lock_guard<std::mutex> lock(commit_mu_);
    commit_closed_ = true;
    commit_cv_.notify_all();
  }
  committer.join();
  if (run_status.ok() && !listing_status.ok()) run_status = listing_status;

  RunResult result;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.interrupted = CancelRequested();
  result.buffers_reused = buffers_->reused();
  result.listing_seconds = listing_seconds_.load();
  if (final_state != state::JobState::kRunning) {
    // The job is over (cancelled, completed or failed): no upload of it may
    // stay open at the destination. (Only a cancelled job normally has any.)
    auto uploads = store_.ListUploads(id_);
    if (uploads.ok()) {
      for (const auto& [key, rec] : *uploads) (void)AbandonUpload(ctx_, key);
    }
  }
  {
    std::lock_guard<std::mutex> lock(fatal_mu_);
    if (run_status.ok() && !fatal_.ok()) run_status = fatal_;
  }
  if (taken_over) {
    // Another runner holds the job now: its state and leases are its own.
    return run_status;
  }
  (void)store_.ReleaseOwner(id_, runner_);
  if (spec_.pool && final_state == state::JobState::kRunning) {
    // Stopped early, in the pool: the others go on with the job. Give the
    // listing back at once if this runner held it.
    // Only the lease is ended (it lapses now, if still ours): the job's
    // state is left to the runners still at it, which may have finished or
    // cancelled it meanwhile.
    if (lister_) {
      Status gave = store_.RenewJob(id_, runner_, NowUnixMs());
      if (!gave.ok() && gave.code() != ErrorCode::kPreconditionFailed &&
          gave.code() != ErrorCode::kNotFound) {
        return gave;
      }
    }
  } else {
    state::JobState leave = final_state == state::JobState::kRunning
                                ? state::JobState::kInterrupted
                                : final_state;
    Status set = store_.SetJobState(id_, leave, NowUnixMs(), result.seconds, true);
    if (!set.ok()) {
      // In the pool another runner may have ended the job and archived it
      // first: then there is nothing left to record.
      auto now_job = store_.GetJob(id_);
      if (!(spec_.pool && now_job.ok() && now_job->archived)) return set;
    } else if (leave != state::JobState::kInterrupted) {
      // Finished: out of the live tables, into the archive (its summary and
      // dead letters stay readable; `dlq --retry` brings it back).
      Status archived = store_.ArchiveJob(id_, NowUnixMs());
      if (!archived.ok()) {
        Emit({Event::Kind::kWarning, "", "the job could not be archived yet", archived.ToString(), 0});
      }
    }
  }
  FERRY_ASSIGN_OR_RETURN(result.job, store_.GetJob(id_));
  Report(result.job, start, done0, bytes0);
  if (!run_status.ok()) return run_status;
  return result;
}

}  // namespace

std::string NewRunnerId() {
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  std::mt19937_64 rng{std::random_device{}()};
  char nonce[17];
  std::snprintf(nonce, sizeof(nonce), "%016llx", static_cast<unsigned long long>(rng()));
  return std::string(host) + ":" + std::to_string(::getpid()) + ":" + nonce;
}

bool RunnerIsDead(const std::string& runner) {
  size_t a = runner.find(':');
  size_t b = a == std::string::npos ? a : runner.find(':', a + 1);
  if (b == std::string::npos) return false;
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  if (runner.substr(0, a) != host) return false;  // another machine: wait for its lease
  pid_t pid = static_cast<pid_t>(std::strtol(runner.c_str() + a + 1, nullptr, 10));
  if (pid <= 0) return false;
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

Result<RunResult> RunJob(state::StateStore& store, const std::string& id, const RunOptions& o) {
  Runner r(store, id, o);
  return r.Run();
}

}  // namespace ferry::migrate
