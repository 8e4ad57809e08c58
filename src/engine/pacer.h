#pragma once
// Adaptive concurrency for one endpoint (AIMD): like rclone's pacer, but it
// paces how many requests are in flight rather than the gap between them.
// The limit starts at `max`; each throttle answer (503 SlowDown, 429) cuts
// it multiplicatively, at most once per `decrease_interval` so that a burst
// of throttles caused by one overload counts once; every `increase_every`
// successes add one back, up to `max`. Thread-safe.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>

namespace ferry {

struct PacerOptions {
  int max = 64;             // upper bound and starting limit (>= 1)
  int min = 1;              // the limit never drops below this (clamped to [1, max])
  int increase_every = 16;  // successes per +1 of the limit (>= 1)
  double decrease = 0.5;    // limit = floor(limit * decrease) on a throttle, in (0, 1)
  // At most one decrease per interval (a burst of 503s from one overload
  // counts once).
  std::chrono::milliseconds decrease_interval{1000};
};

class Pacer {
 public:
  // Out-of-range options are clamped to the ranges documented above.
  explicit Pacer(PacerOptions o);
  Pacer(const Pacer&) = delete;
  Pacer& operator=(const Pacer&) = delete;

  // Takes an in-flight slot, blocking while in_flight() >= limit(). Returns
  // false, without taking a slot, once CancelRequested() or *stop is true
  // (both polled every <= 50 ms; `stop` may be null).
  bool Acquire(const std::atomic<bool>* stop = nullptr);
  // Takes a slot only if one is free now and no Acquire() is waiting for
  // one (a caller that never waits must not starve those that do); never
  // waits.
  bool TryAcquire();
  // Gives back a slot taken by a successful Acquire() or TryAcquire().
  void Release();

  // Results of requests to this endpoint; independent of Acquire/Release.
  void OnSuccess();
  // A throttle answer (kThrottled). `now` is injectable for tests.
  void OnThrottle(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());

  int limit() const;
  int in_flight() const;
  uint64_t throttles() const;  // OnThrottle() calls
  uint64_t decreases() const;  // throttles that lowered the limit

 private:
  const PacerOptions opt_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int limit_;               // guarded by mu_
  int in_flight_ = 0;       // guarded by mu_
  int waiters_ = 0;         // guarded by mu_; Acquire() calls waiting
  int successes_ = 0;       // guarded by mu_; since the last limit change
  uint64_t throttles_ = 0;  // guarded by mu_
  uint64_t decreases_ = 0;  // guarded by mu_
  std::optional<std::chrono::steady_clock::time_point> last_decrease_;  // guarded by mu_
};

}  // namespace ferry
