#include "pacer.h"

#include <algorithm>

namespace ferry::s3server {

Pacer::Clock::duration Pacer::Reserve(uint64_t bytes, uint64_t rate, Clock::time_point now) {
  std::lock_guard lock(mu_);
  if (rate == 0) {
    next_ = now;
    return Clock::duration::zero();
  }
  // The bytes occupy the link from `start` until `next_`; the caller waits
  // until `next_`, so N bytes take N/rate seconds even on an idle link.
  Clock::time_point start = std::max(next_, now);
  next_ = start + std::chrono::duration_cast<Clock::duration>(
                      std::chrono::duration<double>(static_cast<double>(bytes) /
                                                    static_cast<double>(rate)));
  return next_ - now;
}

size_t PacedChunkSize(uint64_t rate, size_t max_chunk) {
  if (rate == 0) return max_chunk;
  return static_cast<size_t>(std::clamp<uint64_t>(rate / 20, 1024, max_chunk));
}

}  // namespace ferry::s3server
