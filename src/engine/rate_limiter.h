#pragma once
// A token bucket for --bwlimit (bytes/s) and --tps-limit (requests/s),
// shared by every worker of a job. Callers reserve units before using them;
// the bucket may go into debt, and each caller waits out its own share, so
// a large request (a whole buffer) is allowed and simply waits longer, and
// the long-run rate holds whatever the mix of sizes. Thread-safe.

#include <chrono>
#include <cstdint>
#include <mutex>

namespace ferry {

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  // `rate_per_sec` units per second; <= 0 means unlimited. `burst` is how
  // many units may pass at once after an idle spell; <= 0 picks one second's
  // worth (at least 1). The bucket starts full.
  explicit RateLimiter(double rate_per_sec, double burst = 0);
  RateLimiter(const RateLimiter&) = delete;
  RateLimiter& operator=(const RateLimiter&) = delete;

  // Pure core: reserves `n` units requested at `now` and returns how long the
  // caller must wait before using them (zero when the bucket covers them).
  // `now` earlier than a previous call counts as no time passed.
  std::chrono::nanoseconds Reserve(double n, Clock::time_point now);

  // Reserve(n, Clock::now()), then sleeps the wait in slices of <= 100 ms.
  // Returns false early once CancelRequested() (the units stay spent);
  // true when the units may be used. Unlimited: returns true at once.
  bool Take(double n);

  bool unlimited() const { return rate_ <= 0; }
  double rate() const { return rate_; }
  double burst() const { return burst_; }

 private:
  const double rate_;   // units per second
  const double burst_;  // bucket capacity, units
  std::mutex mu_;
  double tokens_;             // guarded by mu_; negative = debt
  Clock::time_point last_{};  // guarded by mu_; when tokens_ was computed
  bool started_ = false;      // guarded by mu_; last_ is set
};

}  // namespace ferry
