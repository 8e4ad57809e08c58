#pragma once
// The gate every fetch from a pool's source passes: it limits concurrent
// fetches, and urgent callers (triggers: a client waits) go first — a
// background caller waits while any urgent one waits or runs over.
// Thread-safe.

#include <condition_variable>
#include <functional>
#include <mutex>

namespace ferry::volume {

class FetchGate {
 public:
  explicit FetchGate(int slots) : slots_(slots) {}
  void Acquire(bool urgent) {
    Acquire([urgent] { return urgent; });
  }
  // `urgent` is asked again whenever the caller wakes, so a background
  // caller becomes urgent while it waits (a trigger joined its fetch) once
  // Nudge() is called. It is called under the gate's lock: it must not
  // call back into the gate.
  void Acquire(const std::function<bool()>& urgent);
  void Release();
  // Wakes waiters to ask their `urgent` again.
  void Nudge();
  int waiting() const;         // callers inside Acquire (tests)
  int urgent_waiting() const;  // of those, the urgent ones (tests)

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int slots_;
  int urgent_waiting_ = 0;
  int waiting_ = 0;
};

}  // namespace ferry::volume
