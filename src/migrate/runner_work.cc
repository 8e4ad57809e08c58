// The Runner's work (runner_impl.h): the dispatcher claims keys into the
// work queue, workers and the asynchronous route transfer them, failures
// are retried or dead-lettered, and finished keys are committed in groups.
#include "migrate/runner_impl.h"

namespace ferry::migrate::runner_internal {

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
      std::this_thread::sleep_for(std::chrono::milliseconds(listing_returned_ ? 50 : 20));
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
      retries_++;
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
  p.retries = retries_.load();
  p.source_circuit = src_circuit_.state();
  p.destination_circuit = dst_circuit_.state();
  p.state_circuit = state_circuit_.state();
  opt_.on_progress(p);
}

}  // namespace ferry::migrate::runner_internal
