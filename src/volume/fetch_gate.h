#pragma once
// The gate every fetch from a pool's source passes, so that demand reads
// always go first: a client waiting on a chunk (a trigger) never waits for
// a slot behind prefetch or background work, and shares the origin with as
// little of it as can be. Thread-safe.
//
// - Priorities: triggers (a client waits), then prefetch (an order's
//   chunks, hints: NBD_CMD_CACHE, readahead), then background hydration. A
//   caller waits while any caller of a higher priority waits.
// - Reserved slots: prefetch and background hold at most slots - reserve
//   slots together; the rest are for triggers.
// - Yielding: while a trigger is in flight, and for `yield_window` after
//   the last one started or ended (clients are busy: another is likely),
//   prefetch and background start only while fewer than `yield_slots` of
//   theirs are in flight. An order that was wrong, or a hydration that
//   is not needed yet, then costs the origin its bytes, not a guest its
//   wait; while clients are quiet (or an order is right: few triggers)
//   they use every slot but the reserve.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>

namespace ferry::volume {

enum class FetchPriority { kBackground = 0, kPrefetch = 1, kTrigger = 2 };

struct FetchGateSettings {
  int reserve = -1;     // slots only triggers take; -1: a quarter of them
  int yield_slots = 2;  // prefetch and background in flight while clients are busy
  std::chrono::milliseconds yield_window{250};
};

class FetchGate {
 public:
  explicit FetchGate(int slots, FetchGateSettings settings = {});
  // Returns the priority the slot was taken at: pass it to Release.
  FetchPriority Acquire(FetchPriority priority) {
    return Acquire([priority] { return priority; });
  }
  // `priority` is asked again whenever the caller wakes, so a caller rises
  // while it waits (a trigger joined its fetch) once Nudge() is called; it
  // never falls back. It is called under the gate's lock: it must not call
  // back into the gate.
  FetchPriority Acquire(const std::function<FetchPriority()>& priority);
  void Release(FetchPriority acquired);
  // A client now waits on a fetch that is already waiting or in flight:
  // wakes waiters to ask their `priority` again, and counts as a trigger
  // for yielding (prefetch and background keep to their yield slots).
  void Nudge();
  int waiting() const;         // callers inside Acquire (tests)
  int urgent_waiting() const;  // of those, triggers (tests)
  int waiting_at(FetchPriority p) const;
  int in_flight_at(FetchPriority p) const;  // slots held (tests)

 private:
  static constexpr int kLevels = 3;
  using Clock = std::chrono::steady_clock;
  // Whether a caller at `level` may take a slot now; else, in *until, when
  // to ask again (Clock::time_point::max(): when woken). With mu_ held.
  bool MayTakeLocked(int level, Clock::time_point now, Clock::time_point* until) const;

  const int slots_;
  const int low_slots_;  // slots prefetch and background may hold together
  const FetchGateSettings settings_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int waiting_at_[kLevels] = {0, 0, 0};
  int held_at_[kLevels] = {0, 0, 0};
  int waiting_ = 0;
  Clock::time_point last_trigger_{};  // a trigger last took or gave back a slot
};

}  // namespace ferry::volume
