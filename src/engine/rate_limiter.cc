#include "engine/rate_limiter.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "base/cancel.h"

namespace ferry {
namespace {

double DefaultBurst(double rate, double burst) {
  if (burst > 0) return burst;
  return std::max(1.0, rate);  // one second's worth
}

constexpr std::chrono::milliseconds kSleepSlice{100};

}  // namespace

RateLimiter::RateLimiter(double rate_per_sec, double burst)
    : rate_(std::isfinite(rate_per_sec) ? rate_per_sec : 0),
      burst_(DefaultBurst(rate_, burst)),
      tokens_(burst_) {}

std::chrono::nanoseconds RateLimiter::Reserve(double n, Clock::time_point now) {
  if (unlimited() || !(n > 0)) return std::chrono::nanoseconds(0);
  std::lock_guard<std::mutex> lock(mu_);
  if (!started_) {
    started_ = true;
    last_ = now;
  } else if (now > last_) {
    double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * rate_);
    last_ = now;
  }
  tokens_ -= n;
  if (tokens_ >= 0) return std::chrono::nanoseconds(0);
  double ns = std::round(-tokens_ / rate_ * 1e9);
  return std::chrono::nanoseconds(static_cast<int64_t>(std::min(ns, 1e18)));  // ~31 years
}

bool RateLimiter::Take(double n) {
  if (unlimited()) return true;
  auto start = Clock::now();
  auto deadline = start + Reserve(n, start);
  for (;;) {
    if (CancelRequested()) return false;
    auto now = Clock::now();
    if (now >= deadline) return true;
    std::this_thread::sleep_for(std::min<Clock::duration>(deadline - now, kSleepSlice));
  }
}

}  // namespace ferry
