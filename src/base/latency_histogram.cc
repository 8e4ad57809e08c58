#include "base/latency_histogram.h"

#include <algorithm>

namespace ferry {

uint64_t LatencyHistogram::Snapshot::count() const {
  uint64_t n = overflow;
  for (uint64_t c : counts) n += c;
  return n;
}

void LatencyHistogram::Observe(std::chrono::nanoseconds d) {
  const double s = std::chrono::duration<double>(d).count();
  const size_t i =
      static_cast<size_t>(std::lower_bound(kBounds.begin(), kBounds.end(), s) - kBounds.begin());
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<uint64_t>(std::max<int64_t>(0, d.count())),
                    std::memory_order_relaxed);
}

LatencyHistogram::Snapshot LatencyHistogram::Snap() const {
  Snapshot s;
  for (size_t i = 0; i < kBounds.size(); ++i)
    s.counts.push_back(counts_[i].load(std::memory_order_relaxed));
  s.overflow = counts_[kBounds.size()].load(std::memory_order_relaxed);
  s.sum = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
  return s;
}

}  // namespace ferry
