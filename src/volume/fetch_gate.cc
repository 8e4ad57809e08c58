#include "volume/fetch_gate.h"

#include <algorithm>

namespace ferry::volume {

void FetchGate::Acquire(const std::function<FetchPriority()>& priority) {
  std::unique_lock lock(mu_);
  ++waiting_;
  int level = static_cast<int>(priority());
  ++waiting_at_[level];
  cv_.wait(lock, [&] {
    int now = std::max(level, static_cast<int>(priority()));
    if (now != level) {  // risen while waiting
      --waiting_at_[level];
      ++waiting_at_[now];
      level = now;
    }
    if (slots_ <= 0) return false;
    for (int higher = level + 1; higher < kLevels; ++higher) {
      if (waiting_at_[higher] > 0) return false;
    }
    return true;
  });
  --waiting_at_[level];
  --waiting_;
  --slots_;
}

void FetchGate::Release() {
  std::lock_guard lock(mu_);
  ++slots_;
  cv_.notify_all();
}

void FetchGate::Nudge() {
  std::lock_guard lock(mu_);
  cv_.notify_all();
}

int FetchGate::waiting() const {
  std::lock_guard lock(mu_);
  return waiting_;
}

int FetchGate::urgent_waiting() const { return waiting_at(FetchPriority::kTrigger); }

int FetchGate::waiting_at(FetchPriority p) const {
  std::lock_guard lock(mu_);
  return waiting_at_[static_cast<int>(p)];
}

}  // namespace ferry::volume
