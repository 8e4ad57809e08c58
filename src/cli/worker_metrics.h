#pragma once
// What `ferry worker --metrics HOST:PORT` serves at GET /metrics, in
// Prometheus's text format: runs by outcome, the current job's objects,
// bytes, rates and in-flight work (as its runners committed them), this
// worker's retries and throttles, circuit states per dependency, the
// pacers' limits, and the state store's latency per operation.
// Thread-safe: the run's progress arrives on the runner's monitor thread,
// scrapes on the metrics server's.

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "base/prom_text.h"
#include "cli/migrate_args.h"
#include "migrate/runner.h"
#include "state/metered_state_store.h"

namespace ferry::cli {

class WorkerMetrics {
 public:
  explicit WorkerMetrics(const state::MeteredStateStore* store) : store_(store) {}

  void RunStarted(const std::string& job);
  void Progress(const migrate::Progress& p);
  // `exit_code` as RunInForeground returned it (0 done, 1 failed, 130 interrupted).
  void RunEnded(int exit_code);

  std::string Render() const;

 private:
  const state::MeteredStateStore* store_;
  mutable std::mutex mu_;
  std::string job_;                           // "" between runs
  std::optional<migrate::Progress> last_;     // of the current run
  uint64_t retries_ = 0, throttles_ = 0;      // of runs ended
  std::map<std::string, uint64_t> outcomes_;  // runs ended, by outcome
};

// One sample per key state of a job's counters (listed, transferred,
// skipped, dead_lettered, pending), labelled job and state, into the family
// `t` has open: the worker's current job and the server's live jobs.
void SampleJobObjects(PromText& t, const std::string& job, const state::JobCounters& c);

// The worker's loop (`ferry worker`, and `ferry server --run-jobs`): runs
// the runnable pool jobs of `store`, oldest first, each with
// RunInForeground's reporting (lines whole under `out_mu` when several
// loops share a process), until interrupted (130) or, with `once`, until
// none is left (0; 1 when a run failed). `metrics` and `out_mu` may be null.
int WorkerLoop(state::StateStore& store, const MigrateArgs& a, bool once, int poll_ms,
               WorkerMetrics* metrics, std::mutex* out_mu);

}  // namespace ferry::cli
