#pragma once
// Retry policy for one remote call (rclone's "low-level retries"): which
// failures to retry and how long to wait. Pure functions, table-tested.

#include <chrono>
#include <cstdint>

#include "base/status.h"

namespace ferry {

struct RetryPolicy {
  int max_attempts = 5;                          // total tries, including the first
  std::chrono::milliseconds base{100};           // first backoff
  std::chrono::milliseconds cap{5'000};          // longest backoff
  std::chrono::milliseconds max_retry_after{30'000};  // clamp for server hints
};

// True when attempt number `attempt` (1-based, just failed with `s`) should
// be followed by another.
bool ShouldRetry(const RetryPolicy& p, const Status& s, int attempt);

// The wait before attempt `attempt + 1`: full-jitter exponential backoff
// (uniform in [0, min(cap, base * 2^(attempt-1))]) computed from `random01`
// in [0,1), or the server's Retry-After when it asked for longer.
std::chrono::milliseconds BackoffDelay(const RetryPolicy& p, const Status& s, int attempt,
                                       double random01);

}  // namespace ferry
