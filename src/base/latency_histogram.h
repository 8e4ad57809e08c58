#pragma once
// A histogram of durations in fixed buckets (Prometheus's default bounds,
// from 5 ms, with finer ones below for local calls), lock-free: Observe()
// from any thread, Snap() for an exposition. Counts are per bucket, not
// cumulative.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

namespace ferry {

class LatencyHistogram {
 public:
  static constexpr std::array<double, 14> kBounds = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
  struct Snapshot {
    std::vector<uint64_t> counts;  // per bound of kBounds
    uint64_t overflow = 0;         // above the last bound
    double sum = 0;                // seconds
    uint64_t count() const;
  };

  void Observe(std::chrono::nanoseconds d);
  Snapshot Snap() const;

 private:
  std::array<std::atomic<uint64_t>, kBounds.size() + 1> counts_{};
  std::atomic<uint64_t> sum_ns_{0};
};

}  // namespace ferry
