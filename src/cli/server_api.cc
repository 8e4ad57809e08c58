#include "cli/server_api.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/prom_text.h"
#include "base/unix_time.h"
#include "cli/dashboard_assets.h"
#include "cli/migrate_args.h"
#include "cli/migrate_output.h"
#include "cli/worker_metrics.h"
#include "crypto/digest.h"
#include "http/headers.h"
#include "migrate/cancel.h"
#include "migrate/create.h"

namespace ferry::cli {

using json = nlohmann::json;

namespace {

http::ApiResponse Json(int status, const json& j) {
  return {status, "application/json", DumpJson(j) + "\n"};
}

http::ApiResponse Error(int status, std::string_view code, const std::string& message) {
  return Json(status, {{"error", {{"code", code}, {"message", message}}}});
}

http::ApiResponse Error(const Status& st) {
  return Error(http::HttpStatusOf(st), ErrorCodeName(st.code()), st.message());
}

// KEY=VALUE pairs of a query string (no percent-decoding: the API's values
// are plain words).
std::map<std::string, std::string> Query(const std::string& q) {
  std::map<std::string, std::string> out;
  size_t at = 0;
  while (at <= q.size()) {
    size_t amp = q.find('&', at);
    if (amp == std::string::npos) amp = q.size();
    const std::string pair = q.substr(at, amp - at);
    const size_t eq = pair.find('=');
    if (!pair.empty()) out[pair.substr(0, eq)] = eq == std::string::npos ? "" : pair.substr(eq + 1);
    at = amp + 1;
  }
  return out;
}

bool Loopback(const std::string& peer) {
  return peer == "::1" || peer == "unix" || peer.rfind("127.", 0) == 0 ||
         peer.rfind("::ffff:127.", 0) == 0;
}

// Equal in time that depends on neither's content nor length: both are
// hashed, the digests compared with OpenSSL's constant-time memcmp.
bool SameSecret(const std::string& a, const std::string& b) {
  const auto x = Sha256(a), y = Sha256(b);
  return CRYPTO_memcmp(x.data(), y.data(), x.size()) == 0;
}

// A job's latest runner report, if there is one.
const state::JobLive* LiveOf(const Result<std::map<std::string, state::JobLive>>& lives,
                             const std::string& id) {
  if (!lives.ok()) return nullptr;
  auto it = lives->find(id);
  return it == lives->end() ? nullptr : &it->second;
}

}  // namespace

Result<migrate::JobSpec> SpecFromBody(const std::string& body) {
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return Status::InvalidArgument("the body is not a JSON object");
  if (!j.contains("src") || !j["src"].is_string() || !j.contains("dst") || !j["dst"].is_string()) {
    return Status::InvalidArgument("expected {\"src\": ..., \"dst\": ..., \"options\"?: {...}}");
  }
  MigrateArgs a;
  a.src = j["src"];
  a.dst = j["dst"];
  CLI::App parser;
  AddJobSpecOptions(&parser, &a);
  std::vector<std::string> args;
  const json options = j.value("options", json::object());
  if (!options.is_object()) return Status::InvalidArgument("options: expected an object of flags");
  for (const auto& [k, v] : options.items()) {
    const json values = v.is_array() ? v : json::array({v});
    for (const auto& x : values) {
      if (x.is_boolean()) {
        if (x.get<bool>()) args.push_back("--" + k);
      } else if (x.is_string()) {
        args.push_back("--" + k + "=" + x.get<std::string>());
      } else if (x.is_number()) {
        args.push_back("--" + k + "=" + x.dump());
      } else {
        return Status::InvalidArgument("options." + k +
                                       ": a string, number, boolean or an array of them");
      }
    }
  }
  std::reverse(args.begin(), args.end());
  try {
    parser.parse(args);
  } catch (const CLI::ParseError& e) {
    return Status::InvalidArgument(std::string("options: ") + e.what());
  }
  return SpecFromArgs(a);
}

std::string ServerApi::Refusal(const http::ServerRequest& r) const {
  if (o_.tokens.empty()) {
    return Loopback(r.peer) ? ""
                            : "this server answers loopback clients only (start it with --tokens "
                              "to serve others)";
  }
  const std::string auth = http::HeaderValue(r.headers, "authorization");
  const std::string kBearer = "Bearer ";
  if (auth.rfind(kBearer, 0) != 0) return "a bearer token is needed (Authorization: Bearer TOKEN)";
  const std::string given = auth.substr(kBearer.size());
  bool ok = false;
  for (const auto& t : o_.tokens) ok = SameSecret(given, t) || ok;  // every token compared
  return ok ? "" : "the token is not valid";
}

http::ApiResponse ServerApi::Handle(const http::ServerRequest& r) {
  http::ApiResponse a = Route(r);
  std::lock_guard lock(mu_);
  answers_[a.status]++;
  return a;
}

http::ApiResponse ServerApi::Route(const http::ServerRequest& r) {
  if (r.body.size() > o_.max_body)
    return Error(413, "too_large", "request body over " + std::to_string(o_.max_body) + " bytes");
  const size_t qmark = r.target.find('?');
  const std::string path = r.target.substr(0, qmark);
  const std::string query = qmark == std::string::npos ? "" : r.target.substr(qmark + 1);
  // The dashboard's static files hold no data: anyone the server answers
  // gets them (its API calls then need the token).
  if (r.method == "GET" && (path == "/" || path.rfind("/ui/", 0) == 0) &&
      (!o_.tokens.empty() || Loopback(r.peer))) {
    for (size_t i = 0; i < kDashboardAssetCount; ++i) {
      if (path == kDashboardAssets[i].path) {
        return {200, kDashboardAssets[i].content_type, std::string(kDashboardAssets[i].body)};
      }
    }
  }
  if (std::string why = Refusal(r); !why.empty()) return Error(401, "unauthorized", why);
  const std::string kJobs = "/v1/jobs";
  if (path == "/v1/verify" && r.method == "POST") {
    if (!o_.verify) return Error(503, "unavailable", "this server runs no verifications");
    auto run = o_.verify->Start(r.body);
    return run.ok() ? Json(202, *run) : Error(run.status());
  }
  if (path.rfind("/v1/verify/", 0) == 0 && r.method == "GET") {
    if (!o_.verify) return Error(503, "unavailable", "this server runs no verifications");
    auto run = o_.verify->Get(path.substr(std::string("/v1/verify/").size()));
    return run.ok() ? Json(200, *run) : Error(run.status());
  }
  if (path == "/v1/overview" && r.method == "GET") {
    return {200, "application/json",
            o_.sampler ? o_.sampler->OverviewJson() + "\n" : "{\"pool\": []}\n"};
  }
  if (path == "/v1/openapi.json" && r.method == "GET") return {200, "application/json", OpenApi()};
  if (path == "/metrics" && r.method == "GET") return {200, "text/plain; version=0.0.4", Metrics()};
  if (path == kJobs && r.method == "GET") return ListJobs(query);
  if (path == kJobs && r.method == "POST") return CreateJob(r.body);
  if (path.rfind(kJobs + "/", 0) == 0) {
    std::string rest = path.substr(kJobs.size() + 1);
    const size_t slash = rest.find('/');
    const std::string id = rest.substr(0, slash);
    const std::string action = slash == std::string::npos ? "" : rest.substr(slash + 1);
    if (id.empty()) return Error(404, "not_found", "no job named");
    if (action.empty() && r.method == "GET") return GetJob(id);
    if (action == "cancel" && r.method == "POST") return Cancel(id);
    if (action == "resume" && r.method == "POST") return Resume(id);
    if (action == "dlq" && r.method == "GET") return DeadLetters(id);
    if (action == "dlq/retry" && r.method == "POST") return RetryDeadLetters(id);
  }
  return Error(404, "not_found",
               r.method + " " + path + " is not part of this API (see /v1/openapi.json)");
}

http::ApiResponse ServerApi::ListJobs(const std::string& query) {
  const auto q = Query(query);
  auto jobs = store_.ListJobs();
  if (!jobs.ok()) return Error(jobs.status());
  if (q.count("all") && q.at("all") != "false") {
    auto archived = store_.ListArchivedJobs();
    if (!archived.ok()) return Error(archived.status());
    jobs->insert(jobs->end(), archived->begin(), archived->end());
    std::stable_sort(jobs->begin(), jobs->end(),
                     [](const auto& x, const auto& y) { return x.created_ms > y.created_ms; });
  }
  auto lives = store_.ListJobLive();
  json out = json::array();
  for (const auto& j : *jobs) {
    if (q.count("state") && q.at("state") != state::ToString(j.state)) continue;
    out.push_back(JobView(j, LiveOf(lives, j.id)));
  }
  return Json(200, {{"jobs", out}});
}

http::ApiResponse ServerApi::CreateJob(const std::string& body) {
  auto spec = SpecFromBody(body);
  if (!spec.ok()) return Error(spec.status());
  spec->pool = true;  // the workers (ferry worker, or this server's --run-jobs) run it
  auto job = migrate::CreateJob(store_, *spec, o_.open ? o_.open("") : OpenOptions{});
  if (!job.ok()) return Error(job.status());
  return Json(201, JobView(*job, nullptr));
}

http::ApiResponse ServerApi::GetJob(const std::string& id) {
  auto job = store_.GetJob(id);
  if (!job.ok()) return Error(job.status());
  auto lives = store_.ListJobLive();
  json view = JobView(*job, LiveOf(lives, id));
  view["history"] =
      RatePointsJson(o_.sampler ? o_.sampler->rates().History(id) : std::vector<RatePoint>{});
  return Json(200, view);
}

json ServerApi::JobView(const state::JobRecord& job, const state::JobLive* live) const {
  json j = json::parse(JobJson(job));
  const JobRate rate = o_.sampler ? o_.sampler->rates().RateOf(job.id) : JobRate{};
  j["objects_per_s"] = rate.objects_per_s;
  j["bytes_per_s"] = rate.bytes_per_s;
  j["eta_seconds"] = rate.eta_s ? json(*rate.eta_s) : json(nullptr);
  if (job.state == state::JobState::kCompleted) j["eta_seconds"] = 0;
  // A report older than this is a runner gone quiet (its lease will tell).
  constexpr int64_t kFreshMs = 15'000;
  if (live && job.state == state::JobState::kRunning && NowUnixMs() - live->at_ms < kFreshMs) {
    json l = json::parse(live->json, nullptr, false);
    if (l.is_object()) j["live"] = std::move(l);
  }
  return j;
}

http::ApiResponse ServerApi::Resume(const std::string& id) {
  auto job = store_.GetJob(id);
  if (!job.ok()) return Error(job.status());
  switch (job->state) {
    case state::JobState::kCancelled:
      return Error(409, "cancelled", "job " + id + " was cancelled");
    case state::JobState::kCompleted:
      return Error(409, "completed", "job " + id + " is complete: nothing to resume");
    case state::JobState::kFailed:  // its dead letters are what is left
      return RetryDeadLetters(id);
    default:
      break;
  }
  auto spec = migrate::SpecFromJson(job->spec);
  if (!spec.ok()) return Error(spec.status());
  if (!spec->pool) {
    return Error(409, "not_pooled",
                 "job " + id + " was started in the foreground; `ferry migrate resume " + id +
                     "` continues it");
  }
  if (!job->runner.empty() && job->runner_until_ms > NowUnixMs()) {
    return Json(202, {{"job", id}, {"resume", "running"}, {"runner", job->runner}});
  }
  // Stopped (interrupted) or never started: the pool's workers take it.
  if (job->state != state::JobState::kCreated) {
    if (Status st = store_.SetJobState(id, state::JobState::kInterrupted, NowUnixMs(), 0, false);
        !st.ok()) {
      return Error(st);
    }
  }
  return Json(202, {{"job", id}, {"resume", "queued"}});
}

http::ApiResponse ServerApi::Cancel(const std::string& id) {
  auto done = migrate::CancelJob(store_, id, o_.open);
  if (!done.ok()) return Error(done.status());
  return Json(202, {{"job", id},
                    {"cancel", *done == migrate::CancelOutcome::kAsked ? "asked" : "cancelled"}});
}

http::ApiResponse ServerApi::DeadLetters(const std::string& id) {
  auto job = store_.GetJob(id);
  if (!job.ok()) return Error(job.status());
  auto dl = store_.ListDeadLetters(id);
  if (!dl.ok()) return Error(dl.status());
  json out = json::array();
  for (const auto& d : *dl) out.push_back(json::parse(DeadLetterJson(d)));
  return Json(200, {{"job", id}, {"dead_letters", out}});
}

http::ApiResponse ServerApi::RetryDeadLetters(const std::string& id) {
  auto job = store_.GetJob(id);
  if (!job.ok()) return Error(job.status());
  if (job->state == state::JobState::kCancelled)
    return Error(409, "cancelled", "job " + id + " was cancelled");
  if (job->archived) {  // finished: back to the live tables, where workers find it
    if (Status st = store_.RestoreJob(id); !st.ok()) return Error(st);
  }
  auto n = store_.RequeueDeadLetters(id);
  if (!n.ok()) return Error(n.status());
  // Runnable again: the pool's workers take it (its listing is done; only
  // the requeued keys are left).
  if (*n > 0) {
    if (Status st = store_.SetJobState(id, state::JobState::kInterrupted, NowUnixMs(), 0, false);
        !st.ok()) {
      return Error(st);
    }
  }
  return Json(202, {{"job", id}, {"requeued", *n}});
}

std::string ServerApi::Metrics() {
  PromText t;
  auto jobs = store_.ListJobs();
  std::map<std::string, int> by_state;
  if (jobs.ok()) {
    for (const auto& j : *jobs) by_state[state::ToString(j.state)]++;
  }
  t.Family("ferry_server_jobs", "gauge", "Live (not archived) jobs by state.");
  for (const char* st : {"created", "running", "interrupted", "completed", "failed", "cancelled"}) {
    t.Sample(by_state[st], {{"state", st}});
  }
  t.Family("ferry_server_job_objects", "gauge",
           "Each live job's keys by state, as its runners committed them.");
  if (jobs.ok()) {
    for (const auto& j : *jobs) {
      SampleJobObjects(t, j.id, j.counters);
    }
  }
  t.Family("ferry_server_job_transferred_bytes", "gauge", "Each live job's bytes transferred.");
  if (jobs.ok()) {
    for (const auto& j : *jobs) t.Sample(static_cast<double>(j.counters.bytes), {{"job", j.id}});
  }
  t.Family("ferry_server_state_store_up", "gauge", "1 when the state store answered this scrape.")
      .Sample(jobs.ok() ? 1 : 0);
  {
    std::lock_guard lock(mu_);
    t.Family("ferry_server_responses_total", "counter", "API answers by HTTP status.");
    for (const auto& [status, n] : answers_)
      t.Sample(static_cast<double>(n), {{"status", std::to_string(status)}});
  }
  t.Family("ferry_server_state_store_seconds", "histogram",
           "Latency of the state store's calls, by operation.");
  for (const auto& [op, h] : store_.Latencies()) t.Buckets(h, {{"op", op}});
  return t.Take();
}

Result<std::vector<std::string>> ReadTokens(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument("--tokens " + path + ": cannot be read");
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    line.erase(0, line.find_first_not_of(" \t"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (!line.empty() && line[0] != '#') out.push_back(line);
  }
  if (out.empty()) return Status::InvalidArgument("--tokens " + path + ": no token in it");
  return out;
}

}  // namespace ferry::cli
