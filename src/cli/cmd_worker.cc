// ferry worker: joins the migration worker pool. It runs the jobs made with
// `ferry migrate --detach` in the state store --state names, oldest first,
// beside any number of other workers on this or other machines (the state
// store is what they share; runner.h says how they split a job). It keeps
// polling for jobs until interrupted, or with --once until none is left.

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <thread>

#include "base/cancel.h"
#include "cli/config_file.h"
#include "cli/migrate_args.h"
#include "cli/registry.h"
#include "cli/worker_metrics.h"
#include "http/api_server.h"
#include "migrate/job_spec.h"

namespace ferry::cli {
namespace {

using Clock = std::chrono::steady_clock;

// A pool job some runner should be working on.
bool Runnable(const state::JobRecord& j) {
  switch (j.state) {
    case state::JobState::kCreated:
    case state::JobState::kRunning:
    case state::JobState::kInterrupted:
      break;
    default:
      return false;
  }
  auto spec = migrate::SpecFromJson(j.spec);
  return spec.ok() && spec->pool;
}

// Sleeps up to `d`, waking early when interrupted.
void Nap(std::chrono::milliseconds d) {
  auto until = Clock::now() + d;
  while (!CancelRequested() && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

int WorkerLoop(state::StateStore& store, const MigrateArgs& a, bool once, int poll_ms,
               WorkerMetrics* metrics, std::mutex* out_mu) {
  // A job whose run failed (its stores do not open, say) is tried again
  // later, not in a tight loop; the others go on meanwhile.
  std::map<std::string, Clock::time_point> not_before;
  bool errored = false;  // with --once: a job's run failed, and is not tried again
  while (!CancelRequested()) {
    auto jobs = store.ListJobs();
    if (!jobs.ok()) {
      // The state store is away (a restart): wait for it.
      std::fprintf(stderr, "ferry: worker: %s; retrying\n", jobs.status().ToString().c_str());
      Nap(std::chrono::milliseconds(1000));
      continue;
    }
    const state::JobRecord* pick = nullptr;
    bool waiting = false;  // a runnable job, backing off (not for good)
    for (auto it = jobs->rbegin(); it != jobs->rend(); ++it) {  // oldest first
      if (!Runnable(*it)) continue;
      auto nb = not_before.find(it->id);
      if (nb != not_before.end() && Clock::now() < nb->second) {
        waiting = waiting || nb->second != Clock::time_point::max();
        continue;
      }
      pick = &*it;
      break;
    }
    if (pick == nullptr) {
      if (once && !waiting) return errored ? 1 : 0;
      Nap(std::chrono::milliseconds(poll_ms));
      continue;
    }
    const std::string id = pick->id;
    if (!a.json && !a.quiet) {
      std::unique_lock<std::mutex> lock;
      if (out_mu) lock = std::unique_lock(*out_mu);
      std::printf("worker: job %s\n", id.c_str());
      std::fflush(stdout);
    }
    if (metrics) metrics->RunStarted(id);
    int code = RunInForeground(store, id, a, out_mu, [&](const migrate::Progress& p) {
      if (metrics) metrics->Progress(p);
    });
    if (metrics) metrics->RunEnded(code);
    if (CancelRequested()) return 130;
    if (code == 1 && once) {
      errored = true;
      not_before[id] = Clock::time_point::max();
    } else if (code == 1) {
      not_before[id] = Clock::now() + std::chrono::seconds(30);
    } else {
      not_before.erase(id);
    }
  }
  return 130;
}

namespace {

int RunWorker(MigrateArgs& a, bool once, int poll_ms, const std::string& metrics_listen) {
  if (auto lease = LeaseOf(a); !lease.ok()) return Fail("--lease", lease.status());
  auto opened = OpenState(a);
  if (!opened.ok()) return Fail("", opened.status());
  // Every call the worker and its runs make is timed (the metrics).
  state::MeteredStateStore store(**opened);
  WorkerMetrics metrics(&store);
  std::unique_ptr<http::ApiServer> server;
  if (!metrics_listen.empty()) {
    server = std::make_unique<http::ApiServer>(metrics_listen, [&](const http::ServerRequest& r) {
      if (r.target != "/metrics" || r.method != "GET")
        return http::ApiResponse{404, "text/plain", "not found\n"};
      return http::ApiResponse{200, "text/plain; version=0.0.4", metrics.Render()};
    });
    if (Status st = server->Start(); !st.ok()) return Fail("--metrics " + metrics_listen, st);
  }
  return WorkerLoop(store, a, once, poll_ms, &metrics, nullptr);
}

}  // namespace

void AddWorkerCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<MigrateArgs>();
  auto once = std::make_shared<bool>(false);
  auto poll = std::make_shared<int>(1000);
  auto metrics = std::make_shared<std::string>();
  auto* w = app.add_subcommand(
      "worker",
      "Join the migration worker pool: run the jobs `ferry migrate --detach` made in the "
      "shared --state, beside other workers, until interrupted");
  AddStateOption(w, a.get());
  w->add_flag("--once", *once,
              "Return when no pool job is left to work on (exit 1 if a job's run failed)");
  w->add_option("--poll-ms", *poll, "How often to look for new jobs when idle")
      ->capture_default_str()
      ->check(CLI::Range(10, 600'000));
  w->add_option(
      "--metrics", *metrics,
      "Serve Prometheus metrics at GET /metrics on HOST:PORT (runs, objects, bytes, retries, "
      "throttles, circuits, state-store latency)");
  AddRunOptions(w, a.get());
  AddDaemonOptions(w, "worker");
  w->callback(
      [a, once, poll, metrics, exit_code] { *exit_code = RunWorker(*a, *once, *poll, *metrics); });
}

}  // namespace ferry::cli
