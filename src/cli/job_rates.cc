#include "cli/job_rates.h"

namespace ferry::cli {

std::optional<double> EtaSeconds(bool listing_done, int64_t pending, double objects_per_s) {
  if (!listing_done) return std::nullopt;
  if (pending <= 0) return 0.0;
  if (objects_per_s <= 0) return std::nullopt;
  return static_cast<double>(pending) / objects_per_s;
}

JobRates::JobRates(int64_t window_ms, int64_t point_ms, int64_t history_ms)
    : window_ms_(window_ms), point_ms_(point_ms), history_ms_(history_ms) {}

JobRate JobRates::RateOfTrack(const Track& t) {
  JobRate r;
  if (t.running && t.recent.size() >= 2) {
    const Sample& a = t.recent.front();
    const Sample& b = t.recent.back();
    const double secs = static_cast<double>(b.t_ms - a.t_ms) / 1000.0;
    if (secs > 0) {
      r.objects_per_s = static_cast<double>(b.finished - a.finished) / secs;
      r.bytes_per_s = static_cast<double>(b.bytes - a.bytes) / secs;
    }
  }
  r.eta_s = EtaSeconds(t.listing_done, t.pending, r.objects_per_s);
  return r;
}

void JobRates::Observe(const std::vector<state::JobRecord>& jobs, int64_t now_ms) {
  std::lock_guard lock(mu_);
  for (const auto& j : jobs) {
    Track& t = tracks_[j.id];
    t.running = j.state == state::JobState::kRunning;
    t.listing_done = j.listing_done;
    t.pending = j.counters.pending;
    t.last_seen_ms = now_ms;
    t.recent.push_back({now_ms, j.counters.transferred + j.counters.skipped, j.counters.bytes});
    // Keep one observation at or before the window's start, so the rate
    // spans the whole window.
    while (t.recent.size() > 2 && t.recent[1].t_ms <= now_ms - window_ms_) t.recent.pop_front();
  }
  for (auto it = tracks_.begin(); it != tracks_.end();) {
    if (it->second.last_seen_ms < now_ms - history_ms_) {
      it = tracks_.erase(it);
    } else {
      ++it;
    }
  }
  if (last_point_ms_ && now_ms - *last_point_ms_ < point_ms_) return;
  last_point_ms_ = now_ms;
  RatePoint sum{now_ms, 0, 0};
  for (auto& [id, t] : tracks_) {
    const JobRate r = t.last_seen_ms == now_ms ? RateOfTrack(t) : JobRate{};
    t.points.push_back({now_ms, r.objects_per_s, r.bytes_per_s});
    while (!t.points.empty() && t.points.front().t_ms <= now_ms - history_ms_) t.points.pop_front();
    sum.objects_per_s += r.objects_per_s;
    sum.bytes_per_s += r.bytes_per_s;
  }
  total_.push_back(sum);
  while (!total_.empty() && total_.front().t_ms <= now_ms - history_ms_) total_.pop_front();
}

JobRate JobRates::RateOf(const std::string& job) const {
  std::lock_guard lock(mu_);
  auto it = tracks_.find(job);
  return it == tracks_.end() ? JobRate{} : RateOfTrack(it->second);
}

std::vector<RatePoint> JobRates::History(const std::string& job) const {
  std::lock_guard lock(mu_);
  auto it = tracks_.find(job);
  if (it == tracks_.end()) return {};
  return {it->second.points.begin(), it->second.points.end()};
}

std::vector<RatePoint> JobRates::Total() const {
  std::lock_guard lock(mu_);
  return {total_.begin(), total_.end()};
}

}  // namespace ferry::cli
