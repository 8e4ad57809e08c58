// Running a migration job in the foreground (RunInForeground, migrate_args.h):
// the run's options from the command line, its progress and events as it
// goes, its summary and exit code once it ends.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

#include "base/cancel.h"
#include "base/unix_time.h"
#include "cli/cli_util.h"
#include "cli/migrate_args.h"
#include "cli/migrate_output.h"
#include "migrate/runner.h"
#include "state/metered_state_store.h"

namespace ferry::cli {
namespace {

// The run's options from the command line; on a bad value, `*where` names
// the option.
Result<migrate::RunOptions> RunOptionsFrom(const MigrateArgs& a, std::string* where) {
  migrate::RunOptions o;
  o.open = a.global.ToOpenOptions("");
  auto budget = ParseSize(a.max_buffer);
  if (!budget.ok()) {
    *where = "--max-buffer";
    return budget.status();
  }
  o.buffer_budget = *budget;
  o.max_pending = a.max_backlog;
  o.force = a.force;
  auto lease = LeaseOf(a);
  if (!lease.ok()) {
    *where = "--lease";
    return lease.status();
  }
  o.lease = *lease;
  return o;
}

// What a run reports while it goes: its progress (a live line on a
// terminal, a JSON line a second with --json) and its events, each printed
// whole under `mu`.
class RunReporter {
 public:
  RunReporter(const std::string& id, const MigrateArgs& a, std::mutex& mu, bool tty)
      : id_(id), a_(a), mu_(mu), tty_(tty) {}

  void OnProgress(const migrate::Progress& p) {
    std::lock_guard<std::mutex> lock(mu_);
    if (a_.json) {
      auto now = std::chrono::steady_clock::now();
      if (now - last_json_ >= std::chrono::seconds(1)) {
        std::printf("%s\n", ProgressJson(id_, p).c_str());
        std::fflush(stdout);
        last_json_ = now;
      }
    } else if (tty_) {
      std::fprintf(stderr, "\r%s\x1b[K", ProgressLine(p).c_str());
      printed_line_ = true;
    }
  }

  void OnEvent(const migrate::Event& e) {
    std::lock_guard<std::mutex> lock(mu_);
    if (a_.json) {
      std::printf("%s\n", EventJson(id_, e).c_str());
      std::fflush(stdout);
    } else if (e.kind == migrate::Event::Kind::kDeadLetter && !a_.quiet) {
      std::fprintf(stderr, "%sferry: dead-lettered %s: %s (%s)\n", printed_line_ ? "\r\x1b[K" : "",
                   e.key.c_str(), e.reason.c_str(), e.error.c_str());
    } else if (e.kind == migrate::Event::Kind::kCircuit && !a_.quiet && !tty_) {
      std::fprintf(stderr, "ferry: circuit %s\n", e.reason.c_str());
    }
    if (e.kind == migrate::Event::Kind::kWarning) {  // also with --json and -q: it matters
      std::fprintf(stderr, "%sferry: warning: %s\n", printed_line_ ? "\r\x1b[K" : "",
                   e.error.c_str());
    }
  }

  // Ends the live line, if one was printed. Called under `mu`.
  void EndLine() const {
    if (printed_line_) std::fprintf(stderr, "\n");
  }

 private:
  const std::string& id_;
  const MigrateArgs& a_;
  std::mutex& mu_;
  const bool tty_;
  bool printed_line_ = false;                          // guarded by mu_
  std::chrono::steady_clock::time_point last_json_{};  // guarded by mu_
};

void PrintJsonSummary(const migrate::RunResult& r, const AfterRun& after,
                      const state::MeteredStateStore& metered) {
  RunFigures run;
  run.seconds = r.seconds;
  run.state_calls = metered.calls();
  run.state_seconds = metered.seconds();
  run.listing_seconds = r.listing_seconds;
  if (after.verify) run.verify_json = VerifyJson(*after.verify);
  run.delete_json = after.DeleteJson();
  std::printf("%s\n", SummaryJson(r.job, run).c_str());
}

// The summary line of job `id`, and what follows it; `prefixed`: the line
// starts with the id (several jobs print at once).
void PrintHumanSummary(const std::string& id, bool prefixed, const migrate::RunResult& r,
                       const AfterRun& after) {
  const state::JobRecord& job = r.job;
  const auto& c = job.counters;
  std::printf("%s%s: listed %lld, transferred %lld, skipped %lld, failed %lld, %s in %.1fs\n",
              prefixed ? (id + " ").c_str() : "", state::ToString(job.state),
              static_cast<long long>(c.listed), static_cast<long long>(c.transferred),
              static_cast<long long>(c.skipped), static_cast<long long>(c.failed),
              HumanBytes(static_cast<uint64_t>(c.bytes)).c_str(), r.seconds);
  if (c.failed > 0) {
    std::fprintf(stderr, "ferry: %lld objects in the dead-letter queue: ferry migrate dlq %s\n",
                 static_cast<long long>(c.failed), id.c_str());
  }
  if (after.verify) std::printf("%s\n", VerifyLine(*after.verify).c_str());
  if (after.prune && !after.prune->refused) {
    std::printf("delete: %lld object%s the source no longer has removed\n",
                static_cast<long long>(after.prune->deleted), after.prune->deleted == 1 ? "" : "s");
  }
}

// The exit code of a run that ended in `state`.
int ExitCodeOf(state::JobState state, const AfterRun& after) {
  switch (state) {
    case state::JobState::kCompleted:
      return after.ExitCode();
    case state::JobState::kFailed:
      return kExitDeadLetters;
    case state::JobState::kCancelled:
      return kExitCancelled;
    default:
      return CancelRequested() ? 130 : 1;
  }
}

}  // namespace

int RunInForeground(state::StateStore& store, const std::string& id, const MigrateArgs& a,
                    std::mutex* out_mu, const std::function<void(const migrate::Progress&)>& also) {
  std::mutex own_mu;
  std::mutex& mu = out_mu != nullptr ? *out_mu : own_mu;
  std::string where;
  auto o = RunOptionsFrom(a, &where);
  if (!o.ok()) return Fail(where, o.status());
  bool tty = ::isatty(STDERR_FILENO) && !a.quiet && !a.json && out_mu == nullptr;
  RunReporter reporter(id, a, mu, tty);
  o->progress_every = std::chrono::milliseconds(tty ? 250 : 1000);
  state::MeteredStateStore metered(store);
  // The runner's report for a control plane elsewhere (ferry server), at
  // most every 2 s; best effort: a failed write only delays the next.
  int64_t reported_ms = 0;
  o->on_progress = [&](const migrate::Progress& p) {
    reporter.OnProgress(p);
    if (also) also(p);
    const int64_t now = NowUnixMs();
    if (now - reported_ms >= 2000) {
      reported_ms = now;
      (void)metered.SetJobLive(id, {now, LiveJson(p)});
    }
  };
  o->on_event = [&](const migrate::Event& e) { reporter.OnEvent(e); };
  auto r = migrate::RunJob(metered, id, *o);
  std::lock_guard<std::mutex> lock(mu);
  reporter.EndLine();
  if (!r.ok()) return Fail("job " + id, r.status());
  auto after = AfterTheRun(r->job, a);
  if (!after.ok()) return Fail("verify", after.status());
  if (a.json) {
    PrintJsonSummary(*r, *after, metered);
  } else if (!a.quiet) {
    PrintHumanSummary(id, out_mu != nullptr, *r, *after);
  }
  std::fflush(stdout);
  return ExitCodeOf(r->job.state, *after);
}

}  // namespace ferry::cli
