#include "http/h2_reset_limiter.h"

#include <algorithm>

namespace ferry::http {

ResetLimiter::ResetLimiter(ResetLimit limit, Clock::time_point now)
    : limit_(limit), tokens_(limit.burst), last_(now) {}

bool ResetLimiter::Allow(Clock::time_point now) {
  if (tripped_) return false;
  if (now > last_) {
    const double seconds = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min<double>(limit_.burst, tokens_ + seconds * limit_.per_second);
    last_ = now;
  }
  if (tokens_ < 1) {
    tripped_ = true;
    return false;
  }
  tokens_ -= 1;
  return true;
}

}  // namespace ferry::http
