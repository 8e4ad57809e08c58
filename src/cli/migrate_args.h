#pragma once
// What `ferry migrate` and `ferry worker` share (cli/ internal): the
// parsed options, opening the state store `--state` names, and running a job
// in the foreground with progress output.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/cli_util.h"
#include "cli/registry.h"
#include "migrate/job_spec.h"
#include "migrate/prune.h"
#include "migrate/runner.h"
#include "migrate/verify.h"
#include "state/state_store.h"

namespace ferry::cli {

// Exit codes beyond 0 (done), 1 (error), 2 (usage), 130 (interrupted).
constexpr int kExitDeadLetters = 3;  // finished, with keys in the dead-letter queue
constexpr int kExitCancelled = 4;
constexpr int kExitDifferences = 5;  // verify: keys missing or different at the destination
constexpr int kExitDeleteRefused = 6;  // --delete: more to delete than --max-delete allows

struct MigrateArgs {
  std::string src, dst;
  // --state: a directory for the SQLite state file, or a PostgreSQL URL
  // (postgres://... or postgresql://...).
  std::string state_location;
  int concurrency = 64;
  int list_concurrency = 4;
  std::string list_by = "ranges";
  int list_chunk = 1000;
  int part_concurrency = 4;
  std::vector<std::string> include, exclude;
  std::string min_size, max_size, newer_than, older_than;
  std::string overwrite = "changed";
  std::string threshold = "64M", part_size = "16M";
  std::string bwlimit, max_buffer = "128M";
  int64_t max_backlog = 200'000;  // RunOptions::max_pending
  double tps_limit = 0;
  int max_attempts = 10;
  bool dry_run = false;
  bool json = false;
  bool quiet = false;
  bool no_server_side = false;
  bool retry_dlq = false;
  bool all = false;
  bool force = false;
  bool detach = false;       // create the job for the worker pool and return
  std::string lease = "60s";  // how long claims last unrenewed (RunOptions::lease)
  bool split = false;
  int split_parallel = 4;
  std::string src_profile, dst_profile;
  std::string job;
  // verify (and migrate --verify)
  bool verify = false;    // migrate: verify the job once it has run
  bool checksum = false;  // hash both sides where no MD5 is known
  bool fix = false;       // verify --job: requeue what differs into the job and run it
  std::string fix_job;    // verify --fix JOB
  int verify_concurrency = 16;
  // incremental sync
  bool since_last = false;
  std::string since_slack = "15m";
  bool delete_extraneous = false;
  int64_t max_delete = 0;
  // --serve: a gateway (ferry gateway) beside the job in this process
  std::string serve, serve_credentials, serve_port_file, serve_bucket;
  GlobalOptions global;
};

// The job a migrate command line describes (its stores, filters, limits).
Result<migrate::JobSpec> SpecFromArgs(const MigrateArgs& a);

// The options that shape a job's spec (--concurrency .. --dry-run and the
// profiles), bound to `a`: `ferry migrate`'s, and what `ferry server`
// accepts as a new job's options.
void AddJobSpecOptions(CLI::App* m, MigrateArgs* a);

// Opens the state store `--state` names: a directory (SQLite, default
// $XDG_STATE_HOME/ferry) or a PostgreSQL database (postgres://...).
Result<std::unique_ptr<state::StateStore>> OpenState(const MigrateArgs& a);

// --lease as a duration (at least 1 s).
Result<std::chrono::milliseconds> LeaseOf(const MigrateArgs& a);

// Runs a job in the foreground with progress output; returns the exit code.
// With `out_mu` (several jobs printing at once) there is no live line, and
// every line printed is whole under that lock.
// `also`, when given, sees every progress report too (a worker's metrics).
int RunInForeground(state::StateStore& store, const std::string& id, const MigrateArgs& a,
                    std::mutex* out_mu = nullptr,
                    const std::function<void(const migrate::Progress&)>& also = nullptr);

// --split: one job per top-level prefix of `whole`, run up to
// --split-parallel at once; the worst of the parts' exit codes.
int RunSplit(state::StateStore& store, const migrate::JobSpec& whole, const MigrateArgs& a);

// Verifies what job `job` copied: its source against its destination, with
// its key mapping and filters. Each difference is printed (a JSON line with
// --json, else a line on stdout, or stderr when `to_stderr`).
Result<migrate::VerifyCounts> VerifyJob(const migrate::JobSpec& job, const MigrateArgs& a,
                                        bool to_stderr,
                                        const std::function<void(const migrate::Difference&)>&
                                            also = nullptr);
// Verify with --fix: VerifyJob for job `job_id` of `store` (its spec
// `job`), each missing or different key requeued into it (restored from
// the archive first), and the job made runnable again (interrupted) when it
// had run to its end and something differs. kInvalidArgument for a
// cancelled job.
struct FixOutcome {
  migrate::VerifyCounts counts;
  int64_t requeued = 0;
};
Result<FixOutcome> VerifyAndRequeue(state::StateStore& store, const std::string& job_id,
                                    const migrate::JobSpec& job, const MigrateArgs& a,
                                    const std::function<void(const migrate::Difference&)>&
                                        also = nullptr);
// What follows a run that reached its end (completed, or failed with dead
// letters): --delete (migrate/prune.h; only after a completed run), then
// --verify, so the check sees what the run leaves. Problems are printed on
// stderr as they happen.
struct AfterRun {
  std::optional<migrate::VerifyCounts> verify;
  std::optional<migrate::PruneResult> prune;
  int64_t max_delete = 0;
  std::string prune_skipped;  // why --delete deleted nothing without trying
  Status prune_error;         // a listing or delete that failed: deletion stopped

  // The summary's "delete" object ("" when --delete was not asked for).
  std::string DeleteJson() const;
  // The exit code they leave a completed job with.
  int ExitCode() const;
};
// What follows job `job` (--delete, --verify). `parts`: the jobs a --split
// whole ran as (their gateways' marks count for --delete); else `job` alone.
Result<AfterRun> AfterTheRun(const state::JobRecord& job, const MigrateArgs& a,
                             const std::vector<std::string>& parts = {});
// `ferry migrate verify`, attached to `migrate`.
void AddVerifyCommand(CLI::App* migrate, const std::shared_ptr<MigrateArgs>& a, int* exit_code);

void AddStateOption(CLI::App* cmd, MigrateArgs* a);
// --max-buffer, --json, -q, --force and the global options.
void AddRunOptions(CLI::App* cmd, MigrateArgs* a);

}  // namespace ferry::cli
