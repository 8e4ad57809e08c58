#include "engine/pacer.h"

#include <algorithm>
#include <cmath>

#include "base/cancel.h"

namespace ferry {
namespace {

PacerOptions Sanitize(PacerOptions o) {
  o.max = std::max(1, o.max);
  o.min = std::clamp(o.min, 1, o.max);
  o.increase_every = std::max(1, o.increase_every);
  if (!(o.decrease > 0.0 && o.decrease < 1.0)) o.decrease = 0.5;
  o.decrease_interval = std::max(std::chrono::milliseconds(0), o.decrease_interval);
  return o;
}

constexpr std::chrono::milliseconds kPollEvery{50};

}  // namespace

Pacer::Pacer(PacerOptions o) : opt_(Sanitize(o)), limit_(opt_.max) {}

bool Pacer::Acquire(const std::atomic<bool>* stop) {
  auto stopping = [stop] { return CancelRequested() || (stop != nullptr && stop->load()); };
  std::unique_lock<std::mutex> lock(mu_);
  if (in_flight_ >= limit_) {
    ++waiters_;  // TryAcquire() leaves freed slots to us meanwhile
    while (in_flight_ >= limit_ && !stopping()) cv_.wait_for(lock, kPollEvery);
    --waiters_;
  }
  if (stopping()) return false;
  ++in_flight_;
  return true;
}

bool Pacer::TryAcquire() {
  std::lock_guard<std::mutex> lock(mu_);
  if (in_flight_ >= limit_ || waiters_ > 0) return false;
  ++in_flight_;
  return true;
}

void Pacer::Release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (in_flight_ > 0) --in_flight_;
  }
  cv_.notify_one();
}

void Pacer::OnSuccess() {
  bool raised = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (limit_ >= opt_.max) return;
    if (++successes_ >= opt_.increase_every) {
      successes_ = 0;
      ++limit_;
      raised = true;
    }
  }
  if (raised) cv_.notify_one();
}

void Pacer::OnThrottle(std::chrono::steady_clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  ++throttles_;
  successes_ = 0;
  if (last_decrease_ && now - *last_decrease_ < opt_.decrease_interval) return;
  int next = std::max(opt_.min, static_cast<int>(std::floor(limit_ * opt_.decrease)));
  if (next < limit_) {
    limit_ = next;
    ++decreases_;
    last_decrease_ = now;
  }
}

int Pacer::limit() const {
  std::lock_guard<std::mutex> lock(mu_);
  return limit_;
}
int Pacer::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_;
}
uint64_t Pacer::throttles() const {
  std::lock_guard<std::mutex> lock(mu_);
  return throttles_;
}
uint64_t Pacer::decreases() const {
  std::lock_guard<std::mutex> lock(mu_);
  return decreases_;
}

}  // namespace ferry
