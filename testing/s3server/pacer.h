#pragma once
// Bandwidth pacing on a virtual clock: each Reserve() books `bytes` of
// transmission time after whatever was booked before, and says how long the
// caller must wait before sending them. Idle time is not banked, so there
// are no bursts after a pause. Thread-safe (one Pacer is shared by all
// connections for the aggregate cap; each connection has its own too).

#include <chrono>
#include <cstdint>
#include <mutex>

namespace ferry::s3server {

class Pacer {
 public:
  using Clock = std::chrono::steady_clock;

  // Delay before `bytes` may be sent at `rate` bytes/s (0 = unlimited: no
  // delay, and the booking is forgotten so a later cap starts fresh).
  Clock::duration Reserve(uint64_t bytes, uint64_t rate, Clock::time_point now);

 private:
  std::mutex mu_;
  Clock::time_point next_{};  // guarded by mu_: when the booked bytes are sent
};

// Body chunk size that keeps pacing smooth at `rate` (about 20 chunks/s),
// between 1 KiB and `max_chunk`.
size_t PacedChunkSize(uint64_t rate, size_t max_chunk);

}  // namespace ferry::s3server
