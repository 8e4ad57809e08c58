#include "engine/retry.h"

#include <algorithm>
#include <cmath>

namespace ferry {

bool ShouldRetry(const RetryPolicy& p, const Status& s, int attempt) {
  return !s.ok() && s.retryable() && attempt < p.max_attempts;
}

std::chrono::milliseconds BackoffDelay(const RetryPolicy& p, const Status& s, int attempt,
                                       double random01) {
  double ceiling = static_cast<double>(p.base.count()) * std::pow(2.0, std::max(0, attempt - 1));
  ceiling = std::min(ceiling, static_cast<double>(p.cap.count()));
  auto delay = std::chrono::milliseconds(static_cast<int64_t>(ceiling * random01));
  if (auto hint = s.retry_after()) delay = std::max(delay, std::min(*hint, p.max_retry_after));
  return delay;
}

}  // namespace ferry
