// ferry server's API on a SQLite state store: jobs listed, one shown,
// filtered by state; a cancel; dead letters; errors as JSON with their
// class; who may ask (loopback only without tokens, a bearer token
// otherwise); oversized bodies; and the OpenAPI document's operations are
// exactly the routes answered.
#include "cli/server_api.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/test_temp_dir.h"
#include "base/unix_time.h"
#include "migrate/create.h"
#include "migrate/job_spec.h"

namespace ferry::cli {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

class ServerApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto st = state::OpenSqliteStateStore(dir_ / "state/migrate.db");
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    store_ = std::move(*st);
    metered_ = std::make_unique<state::MeteredStateStore>(*store_);
    fs::create_directories(dir_ / "src");
    std::ofstream(dir_ / "src/a") << "a";
  }
  std::string NewJob() {
    migrate::JobSpec spec;
    spec.src = dir_ / "src";
    spec.dst = dir_ / "dst";
    spec.pool = true;
    auto job = migrate::CreateJob(*store_, spec, OpenOptions{});
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->id : "";
  }
  http::ServerRequest Req(const std::string& method, const std::string& target,
                          std::string peer = "127.0.0.1") {
    http::ServerRequest r;
    r.method = method;
    r.target = target;
    r.peer = std::move(peer);
    return r;
  }
  std::pair<int, json> Call(ServerApi& api, const http::ServerRequest& r) {
    auto a = api.Handle(r);
    return {a.status, json::parse(a.body)};
  }
  TestTempDir dir_;
  std::unique_ptr<state::StateStore> store_;
  std::unique_ptr<state::MeteredStateStore> metered_;
};

TEST_F(ServerApiTest, JobsListedShownFilteredAndCancelled) {
  ServerApi api(*metered_, {});
  const std::string a = NewJob();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // "newest first" needs two times
  const std::string b = NewJob();
  auto [s1, list] = Call(api, Req("GET", "/v1/jobs"));
  ASSERT_EQ(s1, 200) << list;
  ASSERT_EQ(list["jobs"].size(), 2u);
  EXPECT_EQ(list["jobs"][0]["job"], b);  // newest first
  auto [s2, one] = Call(api, Req("GET", "/v1/jobs/" + a));
  ASSERT_EQ(s2, 200) << one;
  EXPECT_EQ(one["job"], a);
  EXPECT_EQ(one["state"], "created");
  EXPECT_EQ(Call(api, Req("GET", "/v1/jobs?state=running")).second["jobs"].size(), 0u);
  EXPECT_EQ(Call(api, Req("GET", "/v1/jobs?state=created")).second["jobs"].size(), 2u);
  auto [s3, cancel] = Call(api, Req("POST", "/v1/jobs/" + a + "/cancel"));
  ASSERT_EQ(s3, 202) << cancel;
  EXPECT_EQ(cancel["cancel"], "cancelled");
  // Cancelled jobs are archived: gone from the live list, back with ?all.
  EXPECT_EQ(Call(api, Req("GET", "/v1/jobs")).second["jobs"].size(), 1u);
  auto all = Call(api, Req("GET", "/v1/jobs?all=true")).second["jobs"];
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1]["state"], "cancelled");
  auto [s4, dlq] = Call(api, Req("GET", "/v1/jobs/" + b + "/dlq"));
  ASSERT_EQ(s4, 200) << dlq;
  EXPECT_EQ(dlq["dead_letters"].size(), 0u);
}

TEST_F(ServerApiTest, AJobMadeFromJsonWithMigratesOptions) {
  ServerApi api(*metered_, {});
  auto r = Req("POST", "/v1/jobs");
  json body;
  body["src"] = dir_ / "src";
  body["dst"] = dir_ / "dst";
  body["options"] = {
      {"concurrency", 8}, {"include", json::array({"*.txt", "a"})}, {"dry-run", true}};
  r.body = body.dump();
  auto [s1, made] = Call(api, r);
  ASSERT_EQ(s1, 201) << made;
  auto job = store_->GetJob(made["job"]);
  ASSERT_TRUE(job.ok());
  auto spec = json::parse(job->spec);
  EXPECT_EQ(spec["concurrency"], 8) << spec;
  EXPECT_EQ(spec["pool"], true) << spec;
  EXPECT_NE(job->spec.find("*.txt"), std::string::npos) << spec;
  EXPECT_EQ(job->state, state::JobState::kCreated);

  for (const auto& [body, want] : std::vector<std::pair<std::string, std::string>>{
           {"not json", "not a JSON object"},
           {R"({"src": "/x"})", "expected {"},
           {R"({"src": "/x", "dst": "/y", "options": {"concurrency": 0}})",
            "options: --concurrency"},
           {R"({"src": "/x", "dst": "/y", "options": {"no-such-flag": 1}})", "options: "},
           {R"({"src": "/x", "dst": "/y", "options": {"include": {"a": 1}}})",
            "options.include"}}) {
    auto bad = Req("POST", "/v1/jobs");
    bad.body = body;
    auto [st, e] = Call(api, bad);
    EXPECT_EQ(st, 400) << body << ": " << e;
    EXPECT_EQ(e["error"]["code"], "invalid_argument") << body;
    EXPECT_NE(e["error"]["message"].get<std::string>().find(want), std::string::npos)
        << body << ": " << e;
  }
}

TEST_F(ServerApiTest, ErrorsAreJsonWithTheirClass) {
  ServerApi api(*metered_, {});
  auto [s1, e1] = Call(api, Req("GET", "/v1/jobs/nosuchjob"));
  EXPECT_EQ(s1, 404);
  EXPECT_EQ(e1["error"]["code"], "not_found");
  auto [s2, e2] = Call(api, Req("DELETE", "/v1/jobs"));
  EXPECT_EQ(s2, 404);
  EXPECT_NE(e2["error"]["message"].get<std::string>().find("openapi.json"), std::string::npos);
  auto big = Req("POST", "/v1/jobs/x/cancel");
  big.body.assign(70 * 1024, 'x');
  auto [s3, e3] = Call(api, big);
  EXPECT_EQ(s3, 413);
  EXPECT_EQ(e3["error"]["code"], "too_large");
}

TEST_F(ServerApiTest, LoopbackOnlyWithoutTokensAndABearerTokenWithThem) {
  ServerApi open(*metered_, {});
  EXPECT_EQ(Call(open, Req("GET", "/v1/jobs", "::1")).first, 200);
  auto [s, e] = Call(open, Req("GET", "/v1/jobs", "192.0.2.7"));
  EXPECT_EQ(s, 401);
  EXPECT_EQ(e["error"]["code"], "unauthorized");

  ServerApiOptions o;
  o.tokens = {"first-token", "second-token"};
  ServerApi guarded(*metered_, o);
  EXPECT_EQ(Call(guarded, Req("GET", "/v1/jobs")).first, 401);  // loopback too
  for (const auto& [header, want] :
       std::vector<std::pair<std::string, int>>{{"Bearer second-token", 200},
                                                {"Bearer second-tokeN", 401},
                                                {"Bearer ", 401},
                                                {"Basic c2Vjb25kLXRva2Vu", 401},
                                                {"Bearer second-token-and-more", 401}}) {
    auto r = Req("GET", "/v1/jobs", "192.0.2.7");
    r.headers.emplace_back("Authorization", header);
    EXPECT_EQ(Call(guarded, r).first, want) << header;
  }
}

TEST_F(ServerApiTest, TheDashboardIsServedToWhoeverTheApiAnswers) {
  ServerApi open(*metered_, {});
  auto page = open.Handle(Req("GET", "/"));
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("<script src=\"/ui/app.js\">"), std::string::npos);
  auto js = open.Handle(Req("GET", "/ui/app.js"));
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.content_type, "text/javascript; charset=utf-8");
  EXPECT_NE(js.body.find("/v1/overview"), std::string::npos);
  EXPECT_EQ(open.Handle(Req("GET", "/ui/app.css")).status, 200);
  EXPECT_EQ(open.Handle(Req("GET", "/ui/nothing.js")).status, 404);
  EXPECT_EQ(open.Handle(Req("GET", "/ui/../v1/jobs")).status, 404);
  EXPECT_EQ(open.Handle(Req("GET", "/", "192.0.2.7")).status, 401);  // loopback only, as the API
  ServerApiOptions o;
  o.tokens = {"t"};
  ServerApi guarded(*metered_, o);
  EXPECT_EQ(guarded.Handle(Req("GET", "/", "192.0.2.7")).status, 200);  // no data in it
  EXPECT_EQ(guarded.Handle(Req("GET", "/v1/overview", "192.0.2.7")).status, 401);
  auto [s, overview] = Call(open, Req("GET", "/v1/overview"));
  EXPECT_EQ(s, 200);
  EXPECT_TRUE(overview["pool"].is_array()) << overview;
}

TEST_F(ServerApiTest, AJobShowsItsRatesEtaAndItsRunnersLatestReport) {
  auto sampler = DashboardSampler::Make(*metered_, {});
  ASSERT_TRUE(sampler.ok());
  ServerApiOptions o;
  o.sampler = sampler->get();
  ServerApi api(*metered_, o);
  const std::string id = NewJob();
  ASSERT_TRUE(store_->SetJobState(id, state::JobState::kRunning, 1, 0, false).ok());
  (*sampler)->SampleNow(1'000);
  (*sampler)->SampleNow(2'000);
  auto [s1, before] = Call(api, Req("GET", "/v1/jobs/" + id));
  ASSERT_EQ(s1, 200) << before;
  EXPECT_EQ(before["objects_per_s"], 0);
  EXPECT_TRUE(before["eta_seconds"].is_null()) << before;  // not listed yet
  EXPECT_TRUE(before["history"].is_array());
  EXPECT_FALSE(before.contains("live"));
  // A runner (in any process) reports through the state store.
  ASSERT_TRUE(store_
                  ->SetJobLive(id, {NowUnixMs(), R"({"circuits": "destination open", )"
                                                 R"("dst_concurrency": 4, "throttles": 7})"})
                  .ok());
  auto [s2, after] = Call(api, Req("GET", "/v1/jobs"));
  ASSERT_EQ(s2, 200);
  EXPECT_EQ(after["jobs"][0]["live"]["circuits"], "destination open") << after;
  EXPECT_EQ(after["jobs"][0]["live"]["dst_concurrency"], 4);
  EXPECT_EQ(after["jobs"][0]["live"]["throttles"], 7);
  // A report gone stale (the runner died), or a job no longer running: none shown.
  ASSERT_TRUE(store_->SetJobLive(id, {NowUnixMs() - 60'000, "{}"}).ok());
  EXPECT_FALSE(Call(api, Req("GET", "/v1/jobs/" + id)).second.contains("live"));
  ASSERT_TRUE(store_->SetJobLive(id, {NowUnixMs(), "{}"}).ok());
  ASSERT_TRUE(store_->SetJobState(id, state::JobState::kInterrupted, 2, 0, true).ok());
  EXPECT_FALSE(Call(api, Req("GET", "/v1/jobs/" + id)).second.contains("live"));
}

TEST_F(ServerApiTest, ResumeHandsAStoppedPoolJobBackAndRefusesTheRest) {
  ServerApi api(*metered_, {});
  const std::string a = NewJob();
  ASSERT_TRUE(store_->SetJobState(a, state::JobState::kRunning, 1, 0, false).ok());
  auto [s1, r1] = Call(api, Req("POST", "/v1/jobs/" + a + "/resume"));
  EXPECT_EQ(s1, 202) << r1;
  EXPECT_EQ(r1["resume"], "queued");
  EXPECT_EQ(store_->GetJob(a)->state, state::JobState::kInterrupted);  // the pool takes it
  migrate::JobSpec fg;  // a foreground job: its own command resumes it
  fg.src = dir_ / "src";
  fg.dst = dir_ / "dst2";
  auto job = migrate::CreateJob(*store_, fg, OpenOptions{});
  ASSERT_TRUE(job.ok());
  auto [s2, r2] = Call(api, Req("POST", "/v1/jobs/" + job->id + "/resume"));
  EXPECT_EQ(s2, 409) << r2;
  EXPECT_EQ(r2["error"]["code"], "not_pooled");
  EXPECT_NE(r2["error"]["message"].get<std::string>().find("ferry migrate resume"),
            std::string::npos);
  ASSERT_EQ(Call(api, Req("POST", "/v1/jobs/" + a + "/cancel")).first, 202);
  EXPECT_EQ(Call(api, Req("POST", "/v1/jobs/" + a + "/resume")).first, 409);
  EXPECT_EQ(Call(api, Req("POST", "/v1/jobs/nosuch/resume")).first, 404);
}

TEST_F(ServerApiTest, TheOpenApiDocumentListsExactlyTheRoutesAnswered) {
  ServerApi api(*metered_, {});
  const std::string id = NewJob();
  auto doc = json::parse(ServerApi::OpenApi());
  EXPECT_EQ(doc["openapi"], "3.0.3");
  int ops = 0;
  for (const auto& [path, methods] : doc["paths"].items()) {
    for (const auto& [method, _] : methods.items()) {
      std::string target = path;
      if (auto at = target.find("{id}"); at != std::string::npos) target.replace(at, 4, id);
      std::string m = method;
      for (auto& c : m) c = static_cast<char>(std::toupper(c));
      auto a = api.Handle(Req(m, target));
      EXPECT_NE(a.status, 404) << m << " " << target << ": " << a.body;
      ++ops;
    }
  }
  EXPECT_EQ(ops, 11);
  // /metrics is Prometheus's, outside the JSON API and its document.
  NewJob();  // the one above was cancelled by its route
  auto m = api.Handle(Req("GET", "/metrics"));
  EXPECT_EQ(m.status, 200);
  EXPECT_NE(m.body.find("ferry_server_jobs{state=\"created\"} 1\n"), std::string::npos) << m.body;
  EXPECT_NE(m.body.find("ferry_server_responses_total{status=\"200\"}"), std::string::npos)
      << m.body;
  EXPECT_NE(m.body.find("ferry_server_state_store_seconds_count{op=\"list_jobs\"}"),
            std::string::npos)
      << m.body;
  EXPECT_EQ(api.Handle(Req("GET", "/v1/nothing")).status, 404);
  EXPECT_EQ(api.Handle(Req("POST", "/v1/jobs/" + id)).status, 404);  // documented as GET only
}

TEST(ReadTokensTest, OnePerLineCommentsSkippedAndMistakesNamed) {
  TestTempDir dir;
  std::ofstream(dir / "t") << "# ops team\n  abc  \n\ndef\r\n";
  auto t = ReadTokens(dir / "t");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, (std::vector<std::string>{"abc", "def"}));
  std::ofstream(dir / "empty") << "# nothing\n";
  EXPECT_NE(ReadTokens(dir / "empty").status().message().find("no token"), std::string::npos);
  EXPECT_NE(ReadTokens(dir / "missing").status().message().find("cannot be read"),
            std::string::npos);
}

}  // namespace
}  // namespace ferry::cli
