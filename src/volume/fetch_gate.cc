#include "volume/fetch_gate.h"

namespace ferry::volume {

void FetchGate::Acquire(const std::function<bool()>& urgent_now) {
  std::unique_lock lock(mu_);
  ++waiting_;
  bool urgent = false;
  cv_.wait(lock, [&] {
    if (!urgent && urgent_now()) {  // urgent from now on (never back)
      urgent = true;
      ++urgent_waiting_;
    }
    return slots_ > 0 && (urgent || urgent_waiting_ == 0);
  });
  if (urgent) --urgent_waiting_;
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

int FetchGate::urgent_waiting() const {
  std::lock_guard lock(mu_);
  return urgent_waiting_;
}

}  // namespace ferry::volume
