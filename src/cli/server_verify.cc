#include "cli/server_verify.h"

#include <openssl/rand.h>

#include "base/unix_time.h"
#include "cli/migrate_output.h"
#include "cli/server_api.h"
#include "migrate/job_spec.h"

namespace ferry::cli {

using json = nlohmann::json;

namespace {

std::string NewRunId() {
  unsigned char b[6];
  RAND_bytes(b, sizeof b);
  static const char* hex = "0123456789abcdef";
  std::string id = "v";
  for (unsigned char c : b) {
    id += hex[c >> 4];
    id += hex[c & 15];
  }
  return id;
}


}  // namespace

VerifyRuns::~VerifyRuns() {
  std::map<std::string, std::thread> all;
  {
    std::lock_guard lock(mu_);
    all.swap(threads_);
  }
  for (auto& [id, t] : all) t.join();
}

Result<VerifyRuns::Request> VerifyRuns::Parse(const std::string& body) const {
  Request q;
  q.raw = json::parse(body, nullptr, false);
  const json& j = q.raw;
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument("the body is not a JSON object");
  }
  q.args = base_;
  q.args.quiet = true;  // the differences go to the run's view, not to stdout
  q.args.json = false;
  if (j.contains("checksum")) {
    if (!j["checksum"].is_boolean()) return Status::InvalidArgument("checksum: true or false");
    q.args.checksum = j["checksum"].get<bool>();
  }
  if (j.contains("concurrency")) {
    if (!j["concurrency"].is_number_integer() || j["concurrency"].get<int>() < 1 ||
        j["concurrency"].get<int>() > 256) {
      return Status::InvalidArgument("concurrency: an integer from 1 to 256");
    }
    q.args.verify_concurrency = j["concurrency"].get<int>();
  }
  q.fix = j.value("fix", false);
  if (!j.contains("job")) {
    if (q.fix) return Status::InvalidArgument("fix needs a job (the job to requeue into)");
    FERRY_ASSIGN_OR_RETURN(q.spec, SpecFromBody(body));
    if (q.spec.src_profile.empty()) q.spec.src_profile = base_.global.profile;
    if (q.spec.dst_profile.empty()) q.spec.dst_profile = base_.global.profile;
    return q;
  }
  if (!j["job"].is_string()) return Status::InvalidArgument("job: a job id");
  q.job = j["job"].get<std::string>();
  FERRY_ASSIGN_OR_RETURN(state::JobRecord job, store_.GetJob(q.job));
  FERRY_ASSIGN_OR_RETURN(q.spec, migrate::SpecFromJson(job.spec));
  if (q.fix && !q.spec.pool) {
    return Status::AlreadyExists("job " + q.job +
                                 " was started in the foreground: `ferry migrate verify --fix " +
                                 q.job + "` fixes and runs it");
  }
  if (q.fix && job.state == state::JobState::kCancelled) {
    return Status::AlreadyExists("job " + q.job + " was cancelled; start a new job");
  }
  return q;
}

Result<json> VerifyRuns::Start(const std::string& body) {
  FERRY_ASSIGN_OR_RETURN(Request q, Parse(body));
  JoinFinished();
  auto run = std::make_shared<Run>();
  run->id = NewRunId();
  run->request = q.raw;
  run->started_ms = NowUnixMs();
  {
    std::lock_guard lock(mu_);
    if (running_ >= kMaxRunning) {
      return Status(
          ErrorCode::kThrottled,
          std::to_string(kMaxRunning) + " verifications are running; try again when one is done");
    }
    ++running_;
    runs_[run->id] = run;
    order_.push_back(run->id);
  }
  std::thread t([this, run, q = std::move(q)] { Execute(*run, q); });
  std::lock_guard lock(mu_);
  threads_[run->id] = std::move(t);
  return View(*run);
}

void VerifyRuns::Execute(Run& run, const Request& q) {
  auto note = [&](const migrate::Difference& d) {
    std::lock_guard lock(mu_);
    if (run.differences.size() < kDifferencesShown) {
      run.differences.push_back(json::parse(DifferenceJson(d)));
    } else {
      ++run.more;
    }
  };
  Result<migrate::VerifyCounts> counts = Status::Internal("not run");
  int64_t requeued = 0;
  if (q.fix) {
    auto fixed = VerifyAndRequeue(store_, q.job, q.spec, q.args, note);
    if (fixed.ok()) {
      counts = fixed->counts;
      requeued = fixed->requeued;
    } else {
      counts = fixed.status();
    }
  } else {
    counts = VerifyJob(q.spec, q.args, false, note);
  }
  std::lock_guard lock(mu_);
  run.finished_ms = NowUnixMs();
  run.requeued = requeued;
  if (counts.ok()) {
    run.state = "done";
    run.counts = json::parse(VerifyJson(*counts));
  } else {
    run.state = "failed";
    run.error = counts.status().ToString();
  }
  --running_;
  Finished();
}

void VerifyRuns::JoinFinished() {
  std::vector<std::thread> done;
  {
    std::lock_guard lock(mu_);
    for (auto it = threads_.begin(); it != threads_.end();) {
      auto run = runs_.find(it->first);
      if (run == runs_.end() || run->second->state != "running") {
        done.push_back(std::move(it->second));  // its thread only returns now
        it = threads_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& t : done) t.join();
}

void VerifyRuns::Finished() {
  size_t finished = 0;
  for (const auto& id : order_) finished += runs_.at(id)->state != "running";
  for (auto it = order_.begin(); finished > kKeptFinished && it != order_.end();) {
    if (runs_.at(*it)->state == "running") {
      ++it;
      continue;
    }
    runs_.erase(*it);
    it = order_.erase(it);
    --finished;
  }
}

Result<json> VerifyRuns::Get(const std::string& id) const {
  std::lock_guard lock(mu_);
  auto it = runs_.find(id);
  if (it == runs_.end()) return Status::NotFound("no verification " + id);
  return View(*it->second);
}

json VerifyRuns::View(const Run& r) const {
  json v;
  v["verify"] = r.id;
  v["state"] = r.state;
  v["request"] = r.request;
  v["started"] = Rfc3339UtcOrDash(r.started_ms);
  v["finished"] = Rfc3339UtcOrDash(r.finished_ms);
  if (!r.counts.is_null()) {
    v["counts"] = r.counts;
    v["ok"] = r.counts.value("ok", false);
  }
  v["differences"] = r.differences;
  v["more"] = r.more;
  if (r.request.value("fix", false)) v["requeued"] = r.requeued;
  if (!r.error.empty()) v["error"] = r.error;
  return v;
}

}  // namespace ferry::cli
