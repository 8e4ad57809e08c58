#pragma once
// Bytes per second of a growing total (bytes a pool's volumes fetched, or
// its clients wrote), from samples taken now and then: each interval's
// rate, averaged with exponentially fading weights, so placement sees the
// bandwidth in use now rather than since the start. A total that goes
// down (a volume was removed) restarts the interval. One sampler; not
// thread-safe.

#include <cmath>
#include <cstdint>

namespace ferry::volume {

class RateMeter {
 public:
  // `half_life_s`: after this long, a rate counts half as much.
  explicit RateMeter(double half_life_s = 2.0) : half_life_s_(half_life_s) {}

  void Sample(double now_s, uint64_t total) {
    if (started_ && now_s > last_s_ && total >= last_total_) {
      double dt = now_s - last_s_;
      double interval_rate = static_cast<double>(total - last_total_) / dt;
      double keep = std::exp2(-dt / half_life_s_);
      rate_ = keep * rate_ + (1 - keep) * interval_rate;
    }
    started_ = true;
    last_s_ = now_s;
    last_total_ = total;
  }
  double rate() const { return rate_; }

 private:
  double half_life_s_;
  bool started_ = false;
  double last_s_ = 0;
  uint64_t last_total_ = 0;
  double rate_ = 0;
};

}  // namespace ferry::volume
