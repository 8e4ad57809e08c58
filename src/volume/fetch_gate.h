#pragma once
// The gate every fetch from a pool's source passes: it limits concurrent
// fetches, and a caller waits while any caller of a higher priority waits:
// triggers (a client waits) go first, then prefetch hints (NBD_CMD_CACHE),
// then background hydration. Thread-safe.

#include <condition_variable>
#include <functional>
#include <mutex>

namespace ferry::volume {

enum class FetchPriority { kBackground = 0, kPrefetch = 1, kTrigger = 2 };

class FetchGate {
 public:
  explicit FetchGate(int slots) : slots_(slots) {}
  void Acquire(FetchPriority priority) {
    Acquire([priority] { return priority; });
  }
  // `priority` is asked again whenever the caller wakes, so a caller rises
  // while it waits (a trigger joined its fetch) once Nudge() is called; it
  // never falls back. It is called under the gate's lock: it must not call
  // back into the gate.
  void Acquire(const std::function<FetchPriority()>& priority);
  void Release();
  // Wakes waiters to ask their `priority` again.
  void Nudge();
  int waiting() const;         // callers inside Acquire (tests)
  int urgent_waiting() const;  // of those, triggers (tests)
  int waiting_at(FetchPriority p) const;

 private:
  static constexpr int kLevels = 3;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int slots_;
  int waiting_at_[kLevels] = {0, 0, 0};
  int waiting_ = 0;
};

}  // namespace ferry::volume
