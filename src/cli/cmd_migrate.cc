// ferry migrate SRC DST, and its job commands: status, list, resume,
// cancel, dlq. Jobs live in the state store --state names (migrate_args.h).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "base/cancel.h"
#include "base/unix_time.h"
#include "cli/cli_util.h"
#include "cli/gateway_serve.h"
#include "cli/migrate_args.h"
#include "cli/migrate_output.h"
#include "cli/registry.h"
#include "migrate/cancel.h"
#include "migrate/create.h"
#include "migrate/filter.h"
#include "migrate/job_spec.h"
#include "migrate/runner.h"

namespace ferry::cli {
namespace {

std::string DefaultStateDir() {
  if (const char* x = std::getenv("XDG_STATE_HOME"); x != nullptr && *x == '/') {
    return std::string(x) + "/ferry";
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr && *home ? home : ".") + "/.local/state/ferry";
}

}  // namespace

Result<std::unique_ptr<state::StateStore>> OpenState(const MigrateArgs& a) {
  if (state::IsPostgresLocation(a.state_location)) {
    return state::OpenPgStateStore(state::PostgresConninfo(a.state_location));
  }
  std::string dir = a.state_location.empty() ? DefaultStateDir() : a.state_location;
  return state::OpenSqliteStateStore(dir + "/migrate.db");
}

Result<migrate::JobSpec> SpecFromArgs(const MigrateArgs& a) {
  migrate::JobSpec s;
  s.src = a.src;
  s.dst = a.dst;
  s.src_profile = a.src_profile.empty() ? a.global.profile : a.src_profile;
  s.dst_profile = a.dst_profile.empty() ? a.global.profile : a.dst_profile;
  s.concurrency = a.concurrency;
  s.list_concurrency = a.list_concurrency;
  s.list_by_prefixes = a.list_by == "prefixes";
  s.list_chunk = a.list_chunk;
  s.since_last = a.since_last;
  if (a.since_last) {
    auto slack = migrate::ParseDurationMs(a.since_slack);
    if (!slack.ok()) return slack.status().WithContext("--since-slack");
    s.since_slack_ms = *slack;
  }
  s.delete_extraneous = a.delete_extraneous;
  s.max_delete = a.max_delete;
  s.part_concurrency = a.part_concurrency;
  s.filter.include = a.include;
  s.filter.exclude = a.exclude;
  if (!a.min_size.empty()) {
    auto v = ParseSize(a.min_size);
    if (!v.ok()) return v.status().WithContext("--min-size");
    s.filter.min_size = *v;
  }
  if (!a.max_size.empty()) {
    auto v = ParseSize(a.max_size);
    if (!v.ok()) return v.status().WithContext("--max-size");
    s.filter.max_size = *v;
  }
  int64_t now = NowUnixMs();
  if (!a.newer_than.empty()) {
    auto v = migrate::ParseTimeSpec(a.newer_than, now);
    if (!v.ok()) return v.status().WithContext("--newer-than");
    s.filter.newer_than_ms = *v;
  }
  if (!a.older_than.empty()) {
    auto v = migrate::ParseTimeSpec(a.older_than, now);
    if (!v.ok()) return v.status().WithContext("--older-than");
    s.filter.older_than_ms = *v;
  }
  FERRY_ASSIGN_OR_RETURN(s.overwrite, migrate::ParseOverwrite(a.overwrite));
  auto t = ParseSize(a.threshold);
  if (!t.ok()) return t.status().WithContext("--multipart-threshold");
  s.multipart_threshold = *t;
  auto p = ParseSize(a.part_size);
  if (!p.ok()) return p.status().WithContext("--part-size");
  if (*p == 0) return Status::InvalidArgument("--part-size must be above 0");
  s.part_size = *p;
  if (!a.bwlimit.empty()) {
    auto b = ParseSize(a.bwlimit);
    if (!b.ok()) return b.status().WithContext("--bwlimit");
    s.bwlimit = static_cast<double>(*b);
  }
  s.tps_limit = a.tps_limit;
  s.max_attempts = a.max_attempts;
  s.dry_run = a.dry_run;
  s.server_side_copy = !a.no_server_side;
  return s;
}

Result<std::chrono::milliseconds> LeaseOf(const MigrateArgs& a) {
  FERRY_ASSIGN_OR_RETURN(int64_t ms, migrate::ParseDurationMs(a.lease));
  if (ms < 1000) return Status::InvalidArgument("must be at least 1s");
  return std::chrono::milliseconds(ms);
}

namespace {

// --serve: the job runs in the foreground while a gateway serves it; once
// it has ended the gateway goes on serving (the destination alone when it
// completed) until interrupted. The job's exit code.
int RunServed(state::StateStore& store, const std::string& id, const MigrateArgs& a) {
  GatewayArgs g;
  g.migrate = a;
  g.job = id;
  g.listen = a.serve;
  g.port_file = a.serve_port_file;
  g.credentials = a.serve_credentials;
  g.bucket = a.serve_bucket;
  auto serving = StartGateway(g);
  if (!serving.ok()) {
    return Fail("--serve (job " + id + " is left for `ferry worker` or `ferry migrate resume`)",
                serving.status());
  }
  const int code = RunInForeground(store, id, a);
  if (CancelRequested()) return code;
  std::fprintf(stderr, "ferry: job %s is over; its gateway serves bucket %s on %s until interrupted\n",
               id.c_str(), (*serving)->bucket().c_str(), (*serving)->address().c_str());
  (*serving)->ServeUntilInterrupted();
  return code;
}

int RunMigrate(MigrateArgs& a) {
  if (a.src.empty() || a.dst.empty()) {
    std::fprintf(stderr, "ferry: migrate needs SRC and DST (see ferry migrate --help)\n");
    return 2;
  }
  auto spec = SpecFromArgs(a);
  if (!spec.ok()) return Fail("", spec.status());
  auto store = OpenState(a);
  if (!store.ok()) return Fail("", store.status());
  if (a.detach && a.split) {
    return Fail("", Status::InvalidArgument("--detach and --split do not go together yet"));
  }
  if (a.detach && (a.verify || a.delete_extraneous)) {
    return Fail("", Status::InvalidArgument(
                        "--verify and --delete run in the process that runs the job, not with "
                        "--detach (run `ferry migrate verify --job` once the pool is done)"));
  }
  if (!a.serve.empty()) {
    if (a.detach || a.split || a.verify || a.delete_extraneous) {
      return Fail("", Status::InvalidArgument(
                          "--serve runs the job beside its gateway in this process: not with "
                          "--detach, --split, --verify or --delete"));
    }
    if (a.serve_credentials.empty()) {
      return Fail("", Status::InvalidArgument(
                          "--serve needs --serve-credentials FILE: clients sign with the "
                          "gateway's own keys"));
    }
  }
  if (a.split) return RunSplit(**store, *spec, a);
  // Served, the gateway is another party in the job, as a pool's workers are.
  spec->pool = a.detach || !a.serve.empty();
  auto job = migrate::CreateJob(**store, *spec, a.global.ToOpenOptions(""));
  if (!job.ok()) return Fail("", job.status());
  if (a.since_last) {
    auto made = migrate::SpecFromJson(job->spec);
    if (made.ok() && made->since_ms == 0) {
      std::fprintf(stderr, "ferry: --since-last: no earlier completed job copied %s to %s with "
                           "these filters: every key is compared\n",
                   a.src.c_str(), a.dst.c_str());
    } else if (made.ok() && !a.quiet && !a.json) {
      std::fprintf(stderr, "ferry: --since-last: keys unchanged since job %s are skipped\n",
                   made->since_job.c_str());
    }
  }
  if (a.json) {
    std::printf("{\"event\":\"job\",\"job\":\"%s\"}\n", job->id.c_str());
  } else {
    std::printf("job %s\n", job->id.c_str());
  }
  std::fflush(stdout);
  if (a.detach) return 0;  // the pool runs it: ferry worker
  if (!a.serve.empty()) return RunServed(**store, job->id, a);
  return RunInForeground(**store, job->id, a);
}

int RunStatus(MigrateArgs& a) {
  auto store = OpenState(a);
  if (!store.ok()) return Fail("", store.status());
  std::string id = a.job;
  if (id.empty()) {
    // The newest job, live or archived.
    auto jobs = (*store)->ListJobs();
    if (!jobs.ok()) return Fail("", jobs.status());
    auto archived = (*store)->ListArchivedJobs();
    if (!archived.ok()) return Fail("", archived.status());
    if (jobs->empty() && archived->empty()) {
      return Fail("", Status::NotFound("no migration jobs yet"));
    }
    const bool live_newer = !jobs->empty() && (archived->empty() || jobs->front().created_ms >=
                                                                        archived->front().created_ms);
    id = live_newer ? jobs->front().id : archived->front().id;
  }
  auto job = (*store)->GetJob(id);
  if (!job.ok()) return Fail("job " + id, job.status());
  std::printf("%s", a.json ? (JobJson(*job) + "\n").c_str() : StatusText(*job).c_str());
  if (!a.json && job->state == state::JobState::kRunning && migrate::RunnerIsDead(job->runner)) {
    std::printf("note         its runner is gone; `ferry migrate resume %s` continues it\n",
                id.c_str());
  }
  return 0;
}

int RunList(MigrateArgs& a) {
  auto store = OpenState(a);
  if (!store.ok()) return Fail("", store.status());
  auto jobs = (*store)->ListJobs();
  if (!jobs.ok()) return Fail("", jobs.status());
  if (a.all) {
    auto archived = (*store)->ListArchivedJobs();
    if (!archived.ok()) return Fail("", archived.status());
    jobs->insert(jobs->end(), archived->begin(), archived->end());
    std::stable_sort(jobs->begin(), jobs->end(), [](const auto& x, const auto& y) {
      return x.created_ms > y.created_ms;
    });
  }
  if (!a.json) std::printf("%-14s %-11s %9s %9s %7s  %s\n", "JOB", "STATE", "LISTED", "DONE", "FAILED", "SOURCE -> DESTINATION");
  for (const auto& j : *jobs) {
    if (a.json) {
      std::printf("%s\n", JobJson(j).c_str());
      continue;
    }
    std::printf("%-14s %-11s %9lld %9lld %7lld  %s -> %s\n", j.id.c_str(), state::ToString(j.state),
                static_cast<long long>(j.counters.listed),
                static_cast<long long>(j.counters.transferred + j.counters.skipped),
                static_cast<long long>(j.counters.failed), j.src.c_str(), j.dst.c_str());
  }
  return 0;
}

int RunResume(MigrateArgs& a) {
  auto store = OpenState(a);
  if (!store.ok()) return Fail("", store.status());
  auto job = (*store)->GetJob(a.job);
  if (!job.ok()) return Fail("job " + a.job, job.status());
  if (job->state == state::JobState::kCompleted) {
    std::printf("job %s is already completed\n", a.job.c_str());
    return 0;
  }
  if (job->state == state::JobState::kCancelled) {
    return Fail("job " + a.job, Status::InvalidArgument("was cancelled; start a new job"));
  }
  return RunInForeground(**store, a.job, a);
}

int RunCancel(MigrateArgs& a) {
  auto store = OpenState(a);
  if (!store.ok()) return Fail("", store.status());
  auto done = migrate::CancelJob(**store, a.job,
                                 [&](const std::string& profile) { return a.global.ToOpenOptions(profile); });
  if (!done.ok()) return Fail("job " + a.job, done.status());
  if (*done == migrate::CancelOutcome::kAsked) {
    std::printf("job %s: cancelling (its runner stops shortly)\n", a.job.c_str());
  } else {
    std::printf("job %s: cancelled\n", a.job.c_str());
  }
  return 0;
}

int RunDlq(MigrateArgs& a) {
  auto store = OpenState(a);
  if (!store.ok()) return Fail("", store.status());
  auto job = (*store)->GetJob(a.job);
  if (!job.ok()) return Fail("job " + a.job, job.status());
  if (a.retry_dlq) {
    if (job->state == state::JobState::kCancelled) {
      return Fail("job " + a.job, Status::InvalidArgument("was cancelled"));
    }
    if (job->archived) {
      // Finished and archived: back to the live tables to run again.
      Status back = (*store)->RestoreJob(a.job);
      if (!back.ok()) return Fail("job " + a.job, back);
    }
    auto n = (*store)->RequeueDeadLetters(a.job);
    if (!n.ok()) return Fail("job " + a.job, n.status());
    if (!a.json && !a.quiet) std::printf("job %s: %lld objects requeued\n", a.job.c_str(), static_cast<long long>(*n));
    return RunInForeground(**store, a.job, a);
  }
  auto dl = (*store)->ListDeadLetters(a.job);
  if (!dl.ok()) return Fail("job " + a.job, dl.status());
  for (const auto& d : *dl) {
    if (a.json) {
      std::printf("%s\n", DeadLetterJson(d).c_str());
    } else {
      std::printf("%s\t%s\tattempts=%d\t%s\n", d.key.c_str(), d.reason.c_str(), d.attempts,
                  d.last_error.c_str());
    }
  }
  return 0;
}

}  // namespace

void AddStateOption(CLI::App* cmd, MigrateArgs* a) {
  cmd->add_option("--state", a->state_location,
                  "Where job state lives: a directory for the embedded SQLite database "
                  "(default $XDG_STATE_HOME/ferry or ~/.local/state/ferry), or a PostgreSQL "
                  "database shared by many workers: postgres://USER@HOST:PORT/DB, or "
                  "postgres:KEY=VALUE... (libpq; PG* environment variables fill the rest)");
}

void AddRunOptions(CLI::App* cmd, MigrateArgs* a) {
  cmd->add_option("--max-buffer", a->max_buffer, "Memory for object and part buffers at once")
      ->capture_default_str();
  cmd->add_option("--max-backlog", a->max_backlog,
                  "Keys the listing may run ahead of the transfers (kept in the state store)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--json", a->json, "JSON lines on stdout: events, then the summary");
  cmd->add_flag("-q,--quiet", a->quiet, "No progress or summary line");
  cmd->add_flag("--force", a->force, "Take the job even if another live runner holds it");
  cmd->add_option("--lease", a->lease,
                  "How long this runner's claims (objects, the listing) last unrenewed; "
                  "another runner takes over a dead one's work after it")
      ->capture_default_str();
  AddGlobalOptions(*cmd, &a->global);
}

namespace {

// --concurrency .. --part-concurrency: how much runs at once.
void AddParallelOptions(CLI::App* m, MigrateArgs* a) {
  m->add_option("--concurrency", a->concurrency, "Objects in flight")->capture_default_str()->check(CLI::Range(1, 4096));
  m->add_option("--list-concurrency", a->list_concurrency,
                "Listings at once (1: one flat listing)")->capture_default_str()->check(CLI::Range(1, 256));
  m->add_option("--list-chunk", a->list_chunk, "Keys asked for per list request")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  m->add_option("--list-by", a->list_by,
                "How parallel listings split an S3 source: ranges (key ranges listed flat, "
                "complete whatever the server's delimiter listing says) or prefixes (one listing "
                "per common prefix, as ferry did before; trusts the server to report every "
                "prefix)")
      ->capture_default_str()
      ->check(CLI::IsMember({"ranges", "prefixes"}));
  m->add_option("--part-concurrency", a->part_concurrency, "Parts in flight per large object")->capture_default_str()->check(CLI::Range(1, 256));
}

// --include .. --overwrite: which keys are copied.
void AddSelectionOptions(CLI::App* m, MigrateArgs* a) {
  m->add_option("--include", a->include, "Only keys matching this glob (repeatable; * ** ? [..] {a,b})");
  m->add_option("--exclude", a->exclude, "Leave out keys matching this glob (repeatable; wins over --include)");
  m->add_option("--min-size", a->min_size, "Only objects of at least this size");
  m->add_option("--max-size", a->max_size, "Only objects of at most this size");
  m->add_option("--newer-than", a->newer_than, "Only objects modified after this (date, RFC 3339, or age like 7d)");
  m->add_option("--older-than", a->older_than, "Only objects modified before this (date, RFC 3339, or age like 7d)");
  m->add_option("--overwrite", a->overwrite, "changed (same size and MD5 are skipped), always, never")->capture_default_str();
}

// --multipart-threshold .. --dry-run: how each object is copied.
void AddTransferOptions(CLI::App* m, MigrateArgs* a) {
  m->add_option("--multipart-threshold", a->threshold, "Multipart at or above this size")->capture_default_str();
  m->add_option("--part-size", a->part_size, "Part size (raised so no object needs more than 10,000)")->capture_default_str();
  m->add_option("--bwlimit", a->bwlimit, "Bytes per second read from the source (e.g. 50M)");
  m->add_option("--tps-limit", a->tps_limit, "Requests per second to the S3 endpoints");
  m->add_option("--max-attempts", a->max_attempts, "Failed attempts before an object is dead-lettered")->capture_default_str()->check(CLI::Range(1, 1000));
  m->add_flag("--dry-run", a->dry_run, "List and decide, copy nothing");
}

// --detach .. --max-delete: how the job runs, and what follows it.
void AddJobOptions(CLI::App* m, MigrateArgs* a) {
  m->add_flag("--detach", a->detach,
              "Only create the job, for the worker pool (`ferry worker` on any machine "
              "sharing --state runs it, many at once); print its id and return");
  m->add_option("--serve", a->serve,
                "HOST:PORT: serve the job through an S3 gateway while it runs and after (as "
                "`ferry gateway`; applications switch to it at once); until interrupted");
  m->add_option("--serve-credentials", a->serve_credentials,
                "The gateway's own access keys: \"ACCESS_KEY_ID SECRET\" per line");
  m->add_option("--serve-port-file", a->serve_port_file, "Write the gateway's bound port here");
  m->add_option("--serve-bucket", a->serve_bucket,
                "The bucket name the gateway's clients use (default: the destination's)");
  m->add_flag("--split", a->split, "One job per top-level prefix, run in parallel (each resumable on its own)");
  m->add_option("--split-parallel", a->split_parallel, "Parts of a --split job running at once")->capture_default_str()->check(CLI::Range(1, 64));
  m->add_flag("--no-server-side-copy", a->no_server_side, "Stream through ferry even within one bucket");
  m->add_flag("--verify", a->verify,
              "Once the job has run, verify the destination against the source (as `ferry "
              "migrate verify`); its counts go in the summary, exit 5 if anything differs");
  m->add_flag("--checksum", a->checksum, "With --verify: hash both sides where no MD5 is known");
  m->add_flag("--since-last", a->since_last,
              "Skip, without a look at the destination, keys unchanged since the last completed "
              "job of the same source, destination and filters started (incremental sync)");
  m->add_option("--since-slack", a->since_slack,
                "With --since-last: how far ferry's clock and the stores' may disagree (keys "
                "changed this long before the last job started are compared)")
      ->capture_default_str();
  m->add_flag("--delete", a->delete_extraneous,
              "Once the job completes without an error, delete destination objects the source "
              "no longer has (at most --max-delete of them)");
  m->add_option("--max-delete", a->max_delete,
                "With --delete: refuse (delete nothing, exit 6) when more than this many would go; "
                "0 only reports how many")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
}

// status, list, resume, cancel, verify and dlq under `migrate`.
void AddJobCommands(CLI::App* m, const std::shared_ptr<MigrateArgs>& a, int* exit_code) {
  auto* status = m->add_subcommand("status", "Show a job (default: the newest)");
  status->add_option("job", a->job, "Job id");
  status->add_flag("--json", a->json, "As one JSON object");
  AddStateOption(status, a.get());
  status->callback([a, exit_code] { *exit_code = RunStatus(*a); });

  auto* list = m->add_subcommand("list", "List jobs still at work, newest first (--all: every job)");
  list->add_flag("--json", a->json, "One JSON object per job");
  list->add_flag("--all", a->all, "Finished jobs from the archive too");
  AddStateOption(list, a.get());
  list->callback([a, exit_code] { *exit_code = RunList(*a); });

  auto* resume = m->add_subcommand("resume", "Run a job again from where it stopped");
  resume->add_option("job", a->job, "Job id")->required();
  AddStateOption(resume, a.get());
  AddRunOptions(resume, a.get());
  resume->callback([a, exit_code] { *exit_code = RunResume(*a); });

  auto* cancel = m->add_subcommand("cancel", "Cancel a job; its runner stops and aborts its uploads");
  cancel->add_option("job", a->job, "Job id")->required();
  AddStateOption(cancel, a.get());
  AddGlobalOptions(*cancel, &a->global);
  cancel->callback([a, exit_code] { *exit_code = RunCancel(*a); });

  AddVerifyCommand(m, a, exit_code);

  auto* dlq = m->add_subcommand("dlq", "List a job's dead-letter queue, or requeue and run it");
  dlq->add_option("job", a->job, "Job id")->required();
  dlq->add_flag("--retry", a->retry_dlq, "Requeue every dead-lettered key and run the job");
  AddStateOption(dlq, a.get());
  AddRunOptions(dlq, a.get());
  dlq->callback([a, exit_code] { *exit_code = RunDlq(*a); });
}

}  // namespace

void AddJobSpecOptions(CLI::App* m, MigrateArgs* a) {
  AddParallelOptions(m, a);
  AddSelectionOptions(m, a);
  AddTransferOptions(m, a);
  m->add_option("--src-profile", a->src_profile, "AWS profile for the source");
  m->add_option("--dst-profile", a->dst_profile, "AWS profile for the destination");
}

void AddMigrateCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<MigrateArgs>();
  auto* m = app.add_subcommand(
      "migrate", "Copy every object under SRC to DST as a resumable job (s3://bucket/prefix, gs://bucket/prefix, azure://account/container/prefix or a directory)");
  m->add_option("src", a->src, "Source: s3://bucket[/prefix], gs://..., azure://account/container[/prefix] or a local directory");
  m->add_option("dst", a->dst, "Destination: s3://bucket[/prefix], gs://..., azure://account/container[/prefix] or a local directory");
  AddStateOption(m, a.get());
  AddJobSpecOptions(m, a.get());
  AddJobOptions(m, a.get());
  AddRunOptions(m, a.get());
  AddJobCommands(m, a, exit_code);
  m->callback([a, exit_code, m] {
    if (!m->get_subcommands().empty()) return;
    *exit_code = RunMigrate(*a);
  });
}

}  // namespace ferry::cli
