#pragma once
// Rates, ETAs and the last hour of migration jobs, from successive
// observations of their committed counters (`ferry server` samples the
// state store every few seconds, whoever runs the jobs: its own runners or
// a pool of `ferry worker`s elsewhere). Pure bookkeeping, no clock of its
// own: the caller passes the time of each observation. Thread-safe.

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "state/state_store.h"

namespace ferry::cli {

struct JobRate {
  double objects_per_s = 0;     // keys finished (transferred or skipped) per second
  double bytes_per_s = 0;       // bytes transferred per second
  std::optional<double> eta_s;  // seconds to go: known once the listing is done and keys move
};

// One point of a chart: the rates at a time.
struct RatePoint {
  int64_t t_ms = 0;
  double objects_per_s = 0;
  double bytes_per_s = 0;
};

// ETA of `pending` keys at `objects_per_s`, when it can be told: the
// listing is done (else more keys may come) and keys move.
std::optional<double> EtaSeconds(bool listing_done, int64_t pending, double objects_per_s);

class JobRates {
 public:
  // Rates are over the last `window_ms` of observations; a chart keeps a
  // point every `point_ms` for `history_ms`.
  explicit JobRates(int64_t window_ms = 30'000, int64_t point_ms = 10'000,
                    int64_t history_ms = 3'600'000);

  // The jobs as the store has them now. Jobs not seen for `history_ms` are
  // forgotten.
  void Observe(const std::vector<state::JobRecord>& jobs, int64_t now_ms);

  // Zero rates for a job not running or seen once only.
  JobRate RateOf(const std::string& job) const;
  // Oldest first, `point_ms` apart, over the last `history_ms`.
  std::vector<RatePoint> History(const std::string& job) const;
  // Every job's rates summed: the pool's throughput over the same time.
  std::vector<RatePoint> Total() const;

 private:
  struct Sample {
    int64_t t_ms = 0;
    int64_t finished = 0;  // transferred + skipped
    int64_t bytes = 0;
  };
  struct Track {
    std::deque<Sample> recent;     // the window's observations
    std::deque<RatePoint> points;  // one per point_ms
    bool running = false;
    bool listing_done = false;
    int64_t pending = 0;
    int64_t last_seen_ms = 0;
  };
  static JobRate RateOfTrack(const Track& t);

  const int64_t window_ms_, point_ms_, history_ms_;
  mutable std::mutex mu_;
  std::map<std::string, Track> tracks_;
  std::deque<RatePoint> total_;           // guarded by mu_
  std::optional<int64_t> last_point_ms_;  // when the last chart point was taken
};

}  // namespace ferry::cli
