// ferry migrate verify SRC DST | --job JOB | --fix JOB: the independent
// check of a migration (migrate/verify.h); and what follows a migrate run,
// --delete (migrate/prune.h) and --verify.
#include <cstdio>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/unix_time.h"
#include "cli/cli_util.h"
#include "cli/migrate_args.h"
#include "cli/migrate_output.h"
#include "migrate/policy.h"
#include "store/location.h"

namespace ferry::cli {
namespace {

struct OpenedSide {
  std::unique_ptr<ObjectStore> store;
  Location loc;
};

Result<OpenedSide> OpenSide(const std::string& where, const std::string& profile,
                            const MigrateArgs& a) {
  OpenedSide side;
  auto loc = ParseLocation(where);
  if (!loc.ok()) return loc.status();
  side.loc = *loc;
  OpenOptions o = a.global.ToOpenOptions(profile);
  o.http.max_idle_per_endpoint = static_cast<size_t>(std::max(64, a.verify_concurrency * 2));
  auto store = OpenStore(side.loc, o);
  if (!store.ok()) return store.status().WithContext(where);
  side.store = std::move(*store);
  return side;
}

// Requeues missing and different keys into a job in batches, as verify
// reports them (in key order, after the comparison).
class Requeuer {
 public:
  Requeuer(state::StateStore& store, std::string job, std::string src_prefix)
      : store_(store), job_(std::move(job)), src_prefix_(std::move(src_prefix)) {}
  void Add(const migrate::Difference& d) {
    if (d.kind == migrate::Difference::Kind::kExtra || !status_.ok()) return;
    batch_.push_back({src_prefix_ + d.key, d.src_size, d.src_etag, d.src_modified_ms});
    if (batch_.size() >= 1000) Flush();
  }
  Status Flush() {
    if (!batch_.empty() && status_.ok()) {
      auto n = store_.RequeueKeys(job_, batch_);
      if (n.ok()) {
        requeued_ += *n;
      } else {
        status_ = n.status();
      }
    }
    batch_.clear();
    return status_;
  }
  int64_t requeued() const { return requeued_; }

 private:
  state::StateStore& store_;
  const std::string job_, src_prefix_;
  std::vector<state::ListedObject> batch_;
  int64_t requeued_ = 0;
  Status status_;
};

// A job's two stores and what comparing them takes.
struct JobSides {
  OpenedSide src, dst;
  migrate::VerifyOptions options;
};

Result<JobSides> OpenJobSides(const migrate::JobSpec& job, const MigrateArgs& a) {
  JobSides s;
  FERRY_ASSIGN_OR_RETURN(s.src, OpenSide(job.src, job.src_profile, a));
  FERRY_ASSIGN_OR_RETURN(s.dst, OpenSide(job.dst, job.dst_profile, a));
  migrate::KeyMap keys = migrate::KeyMapFor(s.src.loc, s.dst.loc);
  migrate::VerifyOptions& o = s.options;
  o.src = s.src.store.get();
  o.dst = s.dst.store.get();
  o.src_prefix = keys.src_prefix;
  o.dst_prefix = keys.dst_prefix;
  o.filter = job.filter;
  o.filter_prefix = job.filter_prefix;
  o.range_after = job.range_after;
  o.range_upper = job.range_upper;
  o.checksum = a.checksum;
  o.concurrency = a.verify_concurrency;
  o.list_chunk = job.list_chunk;
  o.on_warning = [](const std::string& w) {
    std::fprintf(stderr, "ferry: warning: %s\n", w.c_str());
  };
  return s;
}

// --delete once job `spec` completed: removes what its source no longer
// has, printing each key removed unless --json or -q.
// What a client wrote through a gateway stays (its marks outlive the job).
// `jobs`: the job, or every part of a --split whole.
Result<migrate::PruneResult> PruneJob(const std::vector<std::string>& jobs,
                                      const migrate::JobSpec& spec, const MigrateArgs& a) {
  FERRY_ASSIGN_OR_RETURN(JobSides sides, OpenJobSides(spec, a));
  FERRY_ASSIGN_OR_RETURN(auto state, OpenState(a));
  auto kept = [&](const std::vector<std::string>& keys) -> Result<std::set<std::string>> {
    std::set<std::string> written;
    for (const std::string& job : jobs) {
      auto marks = state->KeyMarks(job, keys);
      // A store without marks has had no gateway.
      if (!marks.ok() && marks.status().code() == ErrorCode::kUnsupported) return written;
      FERRY_RETURN_IF_ERROR(marks.status());
      for (const auto& [key, mark] : *marks) {
        if (mark == state::KeyMark::kWritten) written.insert(key);
      }
    }
    return written;
  };
  const bool say = !a.json && !a.quiet;
  return migrate::PruneDestination(sides.options, spec.max_delete, a.verify_concurrency, kept,
                                   [say](const std::string& key) {
                                     if (say) std::printf("deleted  %s\n", key.c_str());
                                   });
}

// --delete for a job that ended: what it did, into `after`.
void PruneAfterRun(const state::JobRecord& job, const std::vector<std::string>& parts,
                   const migrate::JobSpec& spec, const MigrateArgs& a,
                   AfterRun* after) {
  after->max_delete = spec.max_delete;
  if (job.state != state::JobState::kCompleted) {
    after->prune_skipped = "the job has dead letters (a read or write failed): nothing deleted";
    std::fprintf(stderr, "ferry: --delete: %s\n", after->prune_skipped.c_str());
    return;
  }
  auto pruned = PruneJob(parts.empty() ? std::vector<std::string>{job.id} : parts, spec, a);
  if (!pruned.ok()) {
    after->prune_error = pruned.status();
    std::fprintf(stderr, "ferry: --delete: stopped, %s\n", pruned.status().ToString().c_str());
    return;
  }
  after->prune = *pruned;
  if (pruned->refused) {
    std::fprintf(stderr,
                 "ferry: --delete: %lld objects at the destination are not at the source, more "
                 "than --max-delete %lld: nothing deleted\n",
                 static_cast<long long>(pruned->extra), static_cast<long long>(spec.max_delete));
  }
}

// --delete first, so that --verify sees what the run leaves.
}  // namespace

Result<AfterRun> AfterTheRun(const state::JobRecord& job, const MigrateArgs& a,
                             const std::vector<std::string>& parts) {
  AfterRun after;
  if (!state::RanToTheEnd(job.state)) return after;
  FERRY_ASSIGN_OR_RETURN(migrate::JobSpec spec, migrate::SpecFromJson(job.spec));
  if (spec.delete_extraneous) PruneAfterRun(job, parts, spec, a, &after);
  if (a.verify) {
    FERRY_ASSIGN_OR_RETURN(migrate::VerifyCounts c, VerifyJob(spec, a, /*to_stderr=*/true));
    after.verify = c;
  }
  return after;
}

std::string AfterRun::DeleteJson() const {
  if (!prune && prune_skipped.empty() && prune_error.ok()) return "";
  nlohmann::json j;
  if (prune) {
    j = {{"extra", prune->extra},
         {"deleted", prune->deleted},
         {"kept_written_through_gateway", prune->kept},
         {"refused", prune->refused},
         {"max_delete", max_delete}};
  } else {
    j = {{"deleted", 0}, {"skipped", prune_error.ok() ? prune_skipped : prune_error.ToString()}};
  }
  return DumpJson(j);
}

int AfterRun::ExitCode() const {
  if (!prune_error.ok()) return 1;
  if (prune && prune->refused) return kExitDeleteRefused;
  if (verify && !verify->ok()) return kExitDifferences;
  return 0;
}

Result<migrate::VerifyCounts> VerifyJob(
    const migrate::JobSpec& job, const MigrateArgs& a, bool to_stderr,
    const std::function<void(const migrate::Difference&)>& also) {
  FERRY_ASSIGN_OR_RETURN(JobSides sides, OpenJobSides(job, a));
  migrate::VerifyOptions& o = sides.options;
  FILE* out = to_stderr ? stderr : stdout;
  o.on_difference = [&](const migrate::Difference& d) {
    if (a.json) {
      std::printf("%s\n", DifferenceJson(d).c_str());
    } else if (!a.quiet) {
      std::fprintf(out, "%s\n", DifferenceLine(d).c_str());
    }
    if (also) also(d);
  };
  auto counts = migrate::RunVerify(o);
  std::fflush(stdout);
  return counts;
}

Result<FixOutcome> VerifyAndRequeue(state::StateStore& store, const std::string& job_id,
                                    const migrate::JobSpec& job, const MigrateArgs& a,
                                    const std::function<void(const migrate::Difference&)>& also) {
  FERRY_ASSIGN_OR_RETURN(state::JobRecord record, store.GetJob(job_id));
  if (record.state == state::JobState::kCancelled) {
    return Status::InvalidArgument("was cancelled; start a new job");
  }
  if (record.archived) {
    FERRY_RETURN_IF_ERROR(store.RestoreJob(job_id));  // to the live tables, to run again
  }
  FERRY_ASSIGN_OR_RETURN(Location src, ParseLocation(job.src));
  FERRY_ASSIGN_OR_RETURN(Location dst, ParseLocation(job.dst));
  Requeuer requeue(store, job_id, migrate::KeyMapFor(src, dst).src_prefix);
  FixOutcome out;
  FERRY_ASSIGN_OR_RETURN(out.counts, VerifyJob(job, a, false, [&](const migrate::Difference& d) {
                           requeue.Add(d);
                           if (also) also(d);
                         }));
  FERRY_RETURN_IF_ERROR(requeue.Flush());
  out.requeued = requeue.requeued();
  // A finished job runs again (for the pool too: its workers skip finished
  // jobs); one still running takes the keys as they come.
  if (!out.counts.ok()) {
    FERRY_ASSIGN_OR_RETURN(record, store.GetJob(job_id));
    if (state::RanToTheEnd(record.state)) {
      FERRY_RETURN_IF_ERROR(
          store.SetJobState(job_id, state::JobState::kInterrupted, NowUnixMs(), 0, true));
    }
  }
  return out;
}

namespace {

int RunVerifyCommand(MigrateArgs& a, bool fix) {
  if (fix) a.fix = true;
  if (!a.fix_job.empty()) {
    if (!a.job.empty() && a.job != a.fix_job) {
      std::fprintf(stderr, "ferry: --fix %s and --job %s name two jobs\n", a.fix_job.c_str(),
                   a.job.c_str());
      return 2;
    }
    a.job = a.fix_job;
  }
  const bool by_job = !a.job.empty();
  if (by_job == (!a.src.empty() || !a.dst.empty())) {
    std::fprintf(stderr, "ferry: verify needs SRC and DST, or --job JOB (not both)\n");
    return 2;
  }
  if (!by_job && (a.src.empty() || a.dst.empty())) {
    std::fprintf(stderr, "ferry: verify needs SRC and DST\n");
    return 2;
  }
  if (a.fix && !by_job) {
    std::fprintf(stderr, "ferry: --fix needs --job JOB (the job to requeue into)\n");
    return 2;
  }
  migrate::JobSpec spec;
  std::unique_ptr<state::StateStore> store;
  if (by_job) {
    auto opened = OpenState(a);
    if (!opened.ok()) return Fail("", opened.status());
    store = std::move(*opened);
    auto job = store->GetJob(a.job);
    if (!job.ok()) return Fail("job " + a.job, job.status());
    auto parsed = migrate::SpecFromJson(job->spec);
    if (!parsed.ok()) return Fail("job " + a.job, parsed.status());
    spec = *parsed;
  } else {
    spec.src = a.src;
    spec.dst = a.dst;
    spec.src_profile = a.src_profile.empty() ? a.global.profile : a.src_profile;
    spec.dst_profile = a.dst_profile.empty() ? a.global.profile : a.dst_profile;
  }
  if (!a.fix) {
    auto counts = VerifyJob(spec, a, false);
    if (!counts.ok()) return Fail("verify", counts.status());
    std::printf("%s\n", a.json ? VerifyJson(*counts).c_str() : VerifyLine(*counts).c_str());
    std::fflush(stdout);
    return counts->ok() ? 0 : kExitDifferences;
  }
  auto fixed = VerifyAndRequeue(*store, a.job, spec, a);
  if (!fixed.ok()) return Fail("job " + a.job, fixed.status());
  std::printf("%s\n",
              a.json ? VerifyJson(fixed->counts).c_str() : VerifyLine(fixed->counts).c_str());
  std::fflush(stdout);
  if (fixed->counts.ok()) return 0;
  if (!a.json && !a.quiet) {
    std::printf("job %s: %lld objects requeued\n", a.job.c_str(),
                static_cast<long long>(fixed->requeued));
  }
  // Copy them now, as `dlq --retry` does; the job's summary tells how it went.
  return RunInForeground(*store, a.job, a);
}

}  // namespace

void AddVerifyCommand(CLI::App* migrate, const std::shared_ptr<MigrateArgs>& a, int* exit_code) {
  auto* v = migrate->add_subcommand(
      "verify",
      "Check that DST holds what SRC holds (keys, sizes, MD5 where known, else size and time); "
      "exit 0 only when nothing is missing or different, 5 when something is");
  v->add_option("src", a->src, "Source: s3://bucket[/prefix] or a local directory");
  v->add_option("dst", a->dst, "Destination: s3://bucket[/prefix] or a local directory");
  v->add_option("--job", a->job, "Verify this job's source and destination, with its filters");
  v->add_option("--fix", a->fix_job,
                "Requeue what is missing or different into the job (--fix JOB, or --job JOB "
                "--fix) and run it")
      ->expected(0, 1);
  v->add_flag("--checksum", a->checksum,
              "Read and hash both sides where no MD5 is known (multipart objects)");
  v->add_option("--concurrency", a->verify_concurrency, "Key ranges compared at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  v->add_option("--src-profile", a->src_profile, "AWS profile for the source");
  v->add_option("--dst-profile", a->dst_profile, "AWS profile for the destination");
  AddStateOption(v, a.get());
  AddRunOptions(v, a.get());
  v->callback([a, exit_code, v] { *exit_code = RunVerifyCommand(*a, v->count("--fix") > 0); });
}

}  // namespace ferry::cli
