// `ferry migrate --split` (RunSplit, migrate_args.h): one job per top-level
// prefix, up to --split-parallel running at once, each on its own
// connection to the state store; then the whole's summary, verified and
// pruned once, with the worst of the parts' exit codes.
#include <algorithm>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/json_text.h"
#include "base/cancel.h"
#include "cli/cli_util.h"
#include "cli/migrate_args.h"
#include "cli/migrate_output.h"
#include "migrate/create.h"
#include "migrate/split.h"

namespace ferry::cli {
namespace {

void PrintPart(const migrate::JobSpec& part, const std::string& id, bool json) {
  if (json) {
    nlohmann::json j = {{"event", "job"}, {"job", id}, {"src", part.src}};
    if (!part.range_after.empty()) j["after"] = part.range_after;
    if (!part.range_upper.empty()) j["upper"] = part.range_upper;
    std::printf("%s\n", DumpJson(j).c_str());
  } else {
    std::printf("job %s %s\n", id.c_str(), migrate::DescribePart(part).c_str());
  }
}

// Creates the parts' jobs into `ids`; 0, or the exit code of a failure.
int CreateParts(state::StateStore& store, const migrate::JobSpec& whole, const MigrateArgs& a,
                std::vector<std::string>* ids) {
  OpenOptions open = a.global.ToOpenOptions("");
  auto parts = migrate::SplitByPrefix(whole, open);
  if (!parts.ok()) return Fail("", parts.status());
  for (auto& part : *parts) {
    part.concurrency = std::max(4, whole.concurrency / a.split_parallel);
    part.delete_extraneous = false;  // the whole prunes, once every part ran
    auto job = migrate::CreateJob(store, part, open);
    if (!job.ok()) return Fail(part.src, job.status());
    ids->push_back(job->id);
    PrintPart(part, job->id, a.json);
  }
  std::fflush(stdout);
  return 0;
}

// Runs the jobs `ids`, up to --split-parallel at once; the worst exit code
// (dead letters rank below other failures).
int RunParts(const std::vector<std::string>& ids, const MigrateArgs& a) {
  std::mutex mu;
  size_t next = 0;
  int worst = 0;
  // Parts are not verified one by one: the whole is, once every part ran.
  MigrateArgs part_args = a;
  part_args.verify = false;
  auto rank = [](int code) { return code == 0 ? 0 : code == kExitDeadLetters ? 1 : 2; };
  auto worker = [&] {
    for (;;) {
      size_t i;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (next >= ids.size() || CancelRequested()) return;
        i = next++;
      }
      auto st = OpenState(a);
      int code = st.ok() ? RunInForeground(**st, ids[i], part_args, &mu) : Fail("", st.status());
      std::lock_guard<std::mutex> lock(mu);
      if (rank(code) > rank(worst) || (code != 0 && worst == 0)) worst = code;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < std::min<int>(a.split_parallel, static_cast<int>(ids.size())); ++t) {
    threads.emplace_back(worker);
  }
  for (auto& t : threads) t.join();
  return worst;
}

// The whole into `total`: every part's counters added up; 0, or the exit
// code of a failure.
int SumParts(state::StateStore& store, const std::vector<std::string>& ids,
             const migrate::JobSpec& whole, state::JobRecord* total) {
  total->id = ids.front();
  total->state = state::JobState::kCompleted;
  for (const auto& id : ids) {
    auto j = store.GetJob(id);
    if (!j.ok()) return Fail("job " + id, j.status());
    const auto& c = j->counters;
    total->counters.listed += c.listed;
    total->counters.transferred += c.transferred;
    total->counters.skipped += c.skipped;
    total->counters.failed += c.failed;
    total->counters.bytes += c.bytes;
    total->counters.pending += c.pending;
    total->run_seconds = std::max(total->run_seconds, j->run_seconds);
    if (j->state != state::JobState::kCompleted) total->state = j->state;
  }
  total->spec = migrate::SpecToJson(whole);
  return 0;
}

void PrintWhole(const state::JobRecord& total, const std::vector<std::string>& ids,
                const AfterRun& after, const MigrateArgs& a) {
  if (a.json) {
    RunFigures run;
    run.seconds = total.run_seconds;
    if (after.verify) run.verify_json = VerifyJson(*after.verify);
    run.delete_json = after.DeleteJson();
    std::string line = SummaryJson(total, run);
    std::string jobs = nlohmann::json(ids).dump();
    line.insert(line.size() - 1, ",\"jobs\":" + jobs);
    std::printf("%s\n", line.c_str());
  } else if (!a.quiet) {
    const auto& c = total.counters;
    std::printf("%zu jobs: listed %lld, transferred %lld, skipped %lld, failed %lld, %s\n",
                ids.size(), static_cast<long long>(c.listed), static_cast<long long>(c.transferred),
                static_cast<long long>(c.skipped), static_cast<long long>(c.failed),
                HumanBytes(static_cast<uint64_t>(c.bytes)).c_str());
    if (after.verify) std::printf("%s\n", VerifyLine(*after.verify).c_str());
  }
}

}  // namespace

int RunSplit(state::StateStore& store, const migrate::JobSpec& whole, const MigrateArgs& a) {
  std::vector<std::string> ids;
  if (int failed = CreateParts(store, whole, a, &ids); failed != 0) return failed;
  int worst = RunParts(ids, a);
  state::JobRecord total;
  if (int failed = SumParts(store, ids, whole, &total); failed != 0) return failed;
  auto after = AfterTheRun(total, a, ids);
  if (!after.ok()) return Fail("verify", after.status());
  if (worst == 0 && total.state == state::JobState::kCompleted) worst = after->ExitCode();
  PrintWhole(total, ids, *after, a);
  return worst;
}

}  // namespace ferry::cli
