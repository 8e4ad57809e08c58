#include "cli/worker_metrics.h"

#include "base/prom_text.h"

namespace ferry::cli {
namespace {

const char* Outcome(int exit_code) {
  switch (exit_code) {
    case 0:
      return "completed";
    case 130:
      return "interrupted";
    default:
      return "failed";
  }
}

}  // namespace

void WorkerMetrics::RunStarted(const std::string& job) {
  std::lock_guard lock(mu_);
  job_ = job;
  last_.reset();
}

void WorkerMetrics::Progress(const migrate::Progress& p) {
  std::lock_guard lock(mu_);
  last_ = p;
}

void WorkerMetrics::RunEnded(int exit_code) {
  std::lock_guard lock(mu_);
  if (last_) {
    retries_ += last_->retries;
    throttles_ += last_->throttles;
  }
  outcomes_[Outcome(exit_code)]++;
  job_.clear();
  last_.reset();
}

void SampleJobObjects(PromText& t, const std::string& job, const state::JobCounters& c) {
  for (auto [state, n] : {std::pair{"listed", c.listed},
                          {"transferred", c.transferred},
                          {"skipped", c.skipped},
                          {"dead_lettered", c.failed},
                          {"pending", c.pending}}) {
    t.Sample(static_cast<double>(n), {{"job", job}, {"state", state}});
  }
}

std::string WorkerMetrics::Render() const {
  PromText t;
  std::lock_guard lock(mu_);
  t.Family("ferry_worker_runs_total", "counter", "Job runs this worker ended, by outcome.");
  for (const char* o : {"completed", "failed", "interrupted"}) {
    auto it = outcomes_.find(o);
    t.Sample(static_cast<double>(it == outcomes_.end() ? 0 : it->second), {{"outcome", o}});
  }
  t.Family("ferry_worker_running_jobs", "gauge", "Jobs this worker runs now (0 or 1).")
      .Sample(job_.empty() ? 0 : 1);
  const migrate::Progress p = last_.value_or(migrate::Progress{});
  t.Family("ferry_worker_retries_total", "counter",
           "Objects this worker sent back to be tried again.")
      .Sample(static_cast<double>(retries_ + p.retries));
  t.Family("ferry_worker_throttles_total", "counter",
           "503 SlowDown and 429 answers this worker met.")
      .Sample(static_cast<double>(throttles_ + p.throttles));
  if (!job_.empty()) {
    const auto& c = p.counters;
    t.Family("ferry_worker_job_objects", "gauge",
             "The current job's keys by state, as its runners (every worker of the pool) committed "
             "them.");
    SampleJobObjects(t, job_, c);
    t.Family("ferry_worker_job_transferred_bytes", "gauge",
             "The current job's bytes transferred (all its runners).")
        .Sample(static_cast<double>(c.bytes), {{"job", job_}});
    t.Family("ferry_worker_in_flight_objects", "gauge", "Objects this worker is transferring now.")
        .Sample(static_cast<double>(p.in_flight), {{"job", job_}});
    t.Family("ferry_worker_objects_per_second", "gauge",
             "Keys finished per second by the current job, this run.")
        .Sample(p.objects_per_s, {{"job", job_}});
    t.Family("ferry_worker_bytes_per_second", "gauge",
             "Bytes per second of the current job, this run.")
        .Sample(p.bytes_per_s, {{"job", job_}});
    t.Family("ferry_worker_pacer_limit", "gauge",
             "Transfers the pacer lets run at once, per endpoint.")
        .Sample(p.src_limit, {{"side", "source"}})
        .Sample(p.dst_limit, {{"side", "destination"}});
  }
  t.Family("ferry_worker_circuit_state", "gauge",
           "1 for the state each dependency's circuit breaker is in (closed: healthy; open: "
           "failing, no new work).");
  for (auto [dep, st] : {std::pair{"source", p.source_circuit},
                         {"destination", p.destination_circuit},
                         {"state_store", p.state_circuit}}) {
    for (CircuitState s : {CircuitState::kClosed, CircuitState::kOpen, CircuitState::kHalfOpen}) {
      t.Sample(st == s ? 1 : 0, {{"dependency", dep}, {"state", ToString(s)}});
    }
  }
  t.Family("ferry_worker_state_store_seconds", "histogram",
           "Latency of the state store's calls, by operation.");
  for (const auto& [op, h] : store_->Latencies()) t.Buckets(h, {{"op", op}});
  return t.Take();
}

}  // namespace ferry::cli
