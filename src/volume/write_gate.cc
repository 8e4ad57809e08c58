#include "volume/write_gate.h"

namespace ferry::volume {

void WriteGate::Enter() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !freezing_; });
  ++inside_;
}

void WriteGate::Leave() {
  std::lock_guard lock(mu_);
  if (--inside_ == 0) cv_.notify_all();
}

void WriteGate::Freeze(const std::function<void()>& frozen) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !freezing_; });
  freezing_ = true;
  cv_.wait(lock, [&] { return inside_ == 0; });
  lock.unlock();
  frozen();
  lock.lock();
  freezing_ = false;
  cv_.notify_all();
}

}  // namespace ferry::volume
