#pragma once
// What `ferry server`'s dashboard shows beside the jobs: every few seconds
// the sampler observes the jobs (JobRates: rates, ETAs, the pool's last
// hour) and, when given, a volume daemon's API (its volumes: hydration,
// triggers, bytes from the origin and from the cache) and a cache's
// metrics URL (hit ratio, stored / logical bytes, bytes by encoding), and
// keeps an hour of each. The URLs are the operator's, from the command
// line: nothing a client sends is fetched (no open proxy). A source that
// does not answer shows its error and is asked again next time.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cli/job_rates.h"
#include "state/state_store.h"

namespace ferry::http {
class Client;
struct Endpoint;
}  // namespace ferry::http

namespace ferry::cli {

struct DashboardSources {
  std::string volume_api;     // HOST:PORT of `ferry volume serve --api`; "" none
  std::string cache_metrics;  // http(s) URL of a cache's metrics; "" none
  int64_t interval_ms = 5000;
  int64_t history_ms = 3'600'000;
};

// Chart points as the API sends them: [[t_ms, objects/s, bytes/s]...].
nlohmann::json RatePointsJson(const std::vector<RatePoint>& points);

class DashboardSampler {
 public:
  // Checks the sources' syntax (a one-line error for a bad URL).
  static Result<std::unique_ptr<DashboardSampler>> Make(state::StateStore& store,
                                                        DashboardSources s);
  ~DashboardSampler();  // stops the thread

  void Start();                    // samples every interval on a thread of its own
  void SampleNow(int64_t now_ms);  // one round, on the caller's thread (tests)

  const JobRates& rates() const { return rates_; }
  // {"interval_s", "pool": [[t_ms, objects/s, bytes/s]...],
  //  "volumes": {"source", "error"?, "list": [...], "history": [[t_ms,
  //  hydrated chunks, bytes from origin, bytes from cache]...]},
  //  "cache": {"source", "error"?, "hit_ratio", "logical_per_allocated",
  //  "requests": {RESULT: n}, "response_bytes": {ENCODING: n}, "history":
  //  [[t_ms, hits, lookups, response bytes]...]}}; "volumes" and "cache"
  //  only when their sources were given.
  std::string OverviewJson() const;

 private:
  DashboardSampler(state::StateStore& store, DashboardSources s);
  // GET `target` from `ep`: "" with its body, else why not (one line).
  std::string Get(const http::Endpoint& ep, const std::string& target, std::string* body) const;
  void SampleVolumes(int64_t now_ms);
  void SampleCache(int64_t now_ms);
  void Trim(int64_t now_ms);

  state::StateStore& store_;
  const DashboardSources s_;
  JobRates rates_;
  std::unique_ptr<http::Client> client_;
  std::unique_ptr<http::Endpoint> volume_ep_, cache_ep_;
  std::string cache_path_;

  mutable std::mutex mu_;
  nlohmann::json volumes_, cache_;  // the latest answers; guarded by mu_
  std::string volumes_error_, cache_error_;
  std::deque<nlohmann::json> volume_points_, cache_points_;  // [t_ms, ...]

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ferry::cli
