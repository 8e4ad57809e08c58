#pragma once
// How `ferry migrate` reports: a live progress line on a terminal, JSON
// lines with --json (one object per event, the summary last), and the
// human and JSON forms of jobs and dead letters for status/list/dlq.

#include <cstdio>
#include <string>

#include "migrate/runner.h"
#include "migrate/verify.h"
#include "state/state_store.h"

namespace ferry::cli {

// What a run's summary says beyond the job's record.
struct RunFigures {
  double seconds = 0;          // this run
  int64_t state_calls = -1;    // >= 0: state-store calls (state/metered_state_store.h)
  double state_seconds = 0;    // the seconds callers waited in them
  double listing_seconds = 0;  // > 0: this run listed, and its listing took this long
  std::string verify_json;     // non-empty: a JSON object, the verify counts (--verify)
  std::string delete_json;     // non-empty: a JSON object, what --delete did
};

// The summary object: {"job","state","listed","transferred","skipped",
// "failed","bytes","seconds", ...}; transferred + skipped + failed = listed
// once a job has completed or failed.
std::string SummaryJson(const state::JobRecord& job, const RunFigures& run);
std::string JobJson(const state::JobRecord& job);
std::string DeadLetterJson(const state::DeadLetter& d);
std::string ProgressJson(const std::string& job, const migrate::Progress& p);
// What a runner reports to the state store while it runs (state::JobLive):
// circuits, the pacers' limits, throttles, retries, keys in flight, this
// run's rates.
std::string LiveJson(const migrate::Progress& p);
std::string EventJson(const std::string& job, const migrate::Event& e);

// verify's report: each difference, and the counts.
std::string DifferenceJson(const migrate::Difference& d);
std::string DifferenceLine(const migrate::Difference& d);  // "missing  KEY", "differs  KEY: why"
std::string VerifyJson(const migrate::VerifyCounts& c);    // {"event":"verify", ...}
std::string VerifyLine(const migrate::VerifyCounts& c);    // "verify: 7 matched, 1 missing, ..."

// "listed 75000 · done 1200 · skipped 0 · failed 0 · in flight 64 · 1.2 GiB ·
// 2400 obj/s · 41.0 MiB/s · ETA 0:31" (+ " · destination open").
std::string ProgressLine(const migrate::Progress& p);

// Multi-line human status of one job.
std::string StatusText(const state::JobRecord& job);

}  // namespace ferry::cli
