#pragma once
// The Runner behind RunJob (runner.h), shared by runner.cc (its lifecycle:
// setup, the monitor, the end of a run) and runner_work.cc (the dispatcher,
// the workers, failures and the group commit). Not for use elsewhere.

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

#include "base/cancel.h"
#include "base/crash_point.h"
#include "base/unix_time.h"
#include "engine/byte_budget.h"
#include "engine/circuit_breaker.h"
#include "engine/pacer.h"
#include "engine/rate_limiter.h"
#include "engine/retry.h"
#include "migrate/job_lease.h"
#include "migrate/job_lifecycle.h"
#include "migrate/job_spec.h"
#include "migrate/lister.h"
#include "migrate/policy.h"
#include "migrate/runner.h"
#include "migrate/transfer.h"
#include "migrate/work_queue.h"
#include "store/location.h"

namespace ferry::migrate::runner_internal {

using Clock = std::chrono::steady_clock;

inline double Random01() {
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
  // What the monitor ended with: the job's end (nullopt: the run stopped
  // early), whether another runner took the job, and why it stopped.
  struct Monitored {
    std::optional<state::JobState> ended;
    bool taken_over = false;
    Status status;
  };
  // Setup: the job claimed (or found over_), the limits made, the stores
  // opened and ctx_ filled.
  Status Setup();
  Status ClaimJob();
  void MakeLimits();
  OpenOptions SideOptions(const std::string& profile, Pacer* pacer, CircuitBreaker* circuit) const;
  Status OpenStores();
  void StartListing();
  Monitored Monitor(Clock::time_point start, int64_t done0, int64_t bytes0);
  Result<RunResult> Finish(Monitored m, Clock::time_point start, int64_t done0, int64_t bytes0);
  static void CloseAndJoin(std::mutex& mu, std::condition_variable& cv, bool& closed, std::thread& t);
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

  // A pool job (spec_.pool): this runner took the listing lease (the
  // job's runner claim) at Setup. Always true for other jobs. From then on
  // lease_ says whether it lists (the monitor thread's).
  bool lists_at_start_ = true;
  std::unique_ptr<JobLease> lease_;
  std::thread listing_thread_;
  Status listing_status_;  // written by listing_thread_, read once it is joined
  bool over_ = false;  // a pool job that was already finished at Setup
  std::atomic<bool> stop_{false};         // the run is ending: no new work
  std::atomic<bool> list_stop_{false};    // the listing stops (stop_, or the lease lost)
  std::atomic<bool> listing_returned_{false};  // this runner's listing returned whole
  std::atomic<double> listing_seconds_{0};  // this run's listing, once done
  bool src_loc_remote_ = false;             // the source is an object store
  std::atomic<int64_t> pending_{0};       // keys in the state store (estimate)
  std::atomic<int64_t> in_flight_{0};
  std::atomic<uint64_t> retries_{0};  // objects sent back to be tried again
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

template <typename F>
auto Runner::WithState(F f) -> decltype(f()) {
  // Long enough to ride out a state store's restart (about a minute).
  static const RetryPolicy kPolicy{100, std::chrono::milliseconds(50), std::chrono::milliseconds(1000),
                                   std::chrono::milliseconds(1000)};
  for (int attempt = 1;; ++attempt) {
    auto r = f();
    if (r.ok()) {
      state_circuit_.OnSuccess();
      return r;
    }
    state_circuit_.OnFailure(r.status());
    if (!ShouldRetry(kPolicy, r.status(), attempt) || (CancelRequested() && attempt > 3)) return r;
    std::this_thread::sleep_for(BackoffDelay(kPolicy, r.status(), attempt, Random01()));
  }
}

}  // namespace ferry::migrate::runner_internal
