#include "volume/fetch_gate.h"

#include <algorithm>

namespace ferry::volume {

FetchGate::FetchGate(int slots, FetchGateSettings settings)
    : slots_(std::max(1, slots)),
      low_slots_(std::max(1, slots_ - (settings.reserve < 0 ? slots_ / 4 : settings.reserve))),
      settings_(settings) {}

bool FetchGate::MayTakeLocked(int level, Clock::time_point now, Clock::time_point* until) const {
  *until = Clock::time_point::max();
  int held = held_at_[0] + held_at_[1] + held_at_[2];
  if (held >= slots_) return false;
  for (int higher = level + 1; higher < kLevels; ++higher) {
    if (waiting_at_[higher] > 0) return false;
  }
  if (level == static_cast<int>(FetchPriority::kTrigger)) return true;
  int low = held_at_[0] + held_at_[1];
  if (low >= low_slots_) return false;
  bool busy = held_at_[2] > 0;
  if (!busy && last_trigger_ != Clock::time_point{} &&
      now < last_trigger_ + settings_.yield_window) {
    busy = true;
    *until = last_trigger_ + settings_.yield_window;  // clients quiet by then: ask again
  }
  if (busy && low >= settings_.yield_slots) return false;
  return true;
}

FetchPriority FetchGate::Acquire(const std::function<FetchPriority()>& priority) {
  std::unique_lock lock(mu_);
  ++waiting_;
  int level = static_cast<int>(priority());
  ++waiting_at_[level];
  for (;;) {
    int now_level = std::max(level, static_cast<int>(priority()));
    if (now_level != level) {  // risen while waiting
      --waiting_at_[level];
      ++waiting_at_[now_level];
      level = now_level;
    }
    auto now = Clock::now();
    Clock::time_point until;
    if (MayTakeLocked(level, now, &until)) break;
    if (until == Clock::time_point::max()) {
      cv_.wait(lock);
    } else {
      cv_.wait_until(lock, until);
    }
  }
  --waiting_at_[level];
  --waiting_;
  ++held_at_[level];
  if (level == static_cast<int>(FetchPriority::kTrigger)) last_trigger_ = Clock::now();
  // Lower waiters held back only by this one may go now, if slots are left.
  if (waiting_ > 0) cv_.notify_all();
  return static_cast<FetchPriority>(level);
}

void FetchGate::Release(FetchPriority acquired) {
  std::lock_guard lock(mu_);
  --held_at_[static_cast<int>(acquired)];
  if (acquired == FetchPriority::kTrigger) last_trigger_ = Clock::now();
  cv_.notify_all();
}

void FetchGate::Nudge() {
  std::lock_guard lock(mu_);
  last_trigger_ = Clock::now();  // a client waits on a fetch already under way: busy
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

int FetchGate::in_flight_at(FetchPriority p) const {
  std::lock_guard lock(mu_);
  return held_at_[static_cast<int>(p)];
}

}  // namespace ferry::volume
