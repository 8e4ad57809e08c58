// POST /v1/verify's runs on local directories: two locations compared in
// the background with their differences listed; a pool job's destination
// fixed (what is missing requeued, the job runnable again); a foreground
// job's fix, a fix without a job, bad input and unknown ids refused.
#include "cli/server_verify.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "base/test_temp_dir.h"
#include "migrate/create.h"
#include "migrate/job_spec.h"

namespace ferry::cli {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

class VerifyRunsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto st = state::OpenSqliteStateStore(dir_ / "state.db");
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    store_ = std::move(*st);
    fs::create_directories(dir_ / "src/d");
    fs::create_directories(dir_ / "dst/d");
    for (const char* k : {"a", "b", "d/c"}) {
      std::ofstream(dir_ / "src" / fs::path(k)) << "body of " << k;
      if (std::string(k) != "b") std::ofstream(dir_ / "dst" / fs::path(k)) << "body of " << k;
    }
  }
  json Wait(VerifyRuns& runs, const std::string& id) {
    for (int i = 0; i < 500; ++i) {
      auto v = runs.Get(id);
      EXPECT_TRUE(v.ok());
      if (!v.ok() || (*v)["state"] != "running") return v.ok() ? *v : json();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "verification " << id << " still running";
    return json();
  }
  std::string Job(bool pool) {
    migrate::JobSpec spec;
    spec.src = dir_ / "src";
    spec.dst = dir_ / "dst";
    spec.pool = pool;
    auto job = migrate::CreateJob(*store_, spec, OpenOptions{});
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->id : "";
  }
  TestTempDir dir_;
  std::unique_ptr<state::StateStore> store_;
};

TEST_F(VerifyRunsTest, TwoLocationsComparedInTheBackground) {
  VerifyRuns runs(*store_, MigrateArgs{});
  json body = {{"src", dir_ / "src"}, {"dst", dir_ / "dst"}, {"concurrency", 2}};
  auto started = runs.Start(body.dump());
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  json v = Wait(runs, (*started)["verify"]);
  EXPECT_EQ(v["state"], "done") << v;
  EXPECT_EQ(v["ok"], false);
  EXPECT_EQ(v["counts"]["matched"], 2) << v;
  EXPECT_EQ(v["counts"]["missing"], 1);
  ASSERT_EQ(v["differences"].size(), 1u);
  EXPECT_EQ(v["differences"][0]["key"], "b") << v;
  EXPECT_FALSE(v.contains("requeued"));
}

TEST_F(VerifyRunsTest, FixRequeuesIntoAPoolJobAndMakesItRunnable) {
  VerifyRuns runs(*store_, MigrateArgs{});
  const std::string id = Job(true);
  ASSERT_TRUE(store_->SetJobState(id, state::JobState::kCompleted, 1, 0, true).ok());
  auto started = runs.Start(json({{"job", id}, {"fix", true}}).dump());
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  json v = Wait(runs, (*started)["verify"]);
  EXPECT_EQ(v["state"], "done") << v;
  EXPECT_EQ(v["requeued"], 1) << v;
  auto job = store_->GetJob(id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state, state::JobState::kInterrupted);  // the pool's workers take it
}

TEST_F(VerifyRunsTest, BadRequestsRefusedWithTheirClass) {
  VerifyRuns runs(*store_, MigrateArgs{});
  const std::string foreground = Job(false);
  const std::vector<std::pair<std::string, ErrorCode>> cases = {
      {"not json", ErrorCode::kInvalidArgument},
      {R"({"src": "/x"})", ErrorCode::kInvalidArgument},
      {R"({"src": "/x", "dst": "/y", "fix": true})", ErrorCode::kInvalidArgument},
      {R"({"job": "nosuch"})", ErrorCode::kNotFound},
      {R"({"job": 7})", ErrorCode::kInvalidArgument},
      {json({{"job", foreground}, {"concurrency", 0}}).dump(), ErrorCode::kInvalidArgument},
      {json({{"job", foreground}, {"checksum", "yes"}}).dump(), ErrorCode::kInvalidArgument},
      {json({{"job", foreground}, {"fix", true}}).dump(), ErrorCode::kAlreadyExists},
  };
  for (const auto& [body, want] : cases) {
    auto r = runs.Start(body);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), want) << body << ": " << r.status().ToString();
  }
  EXPECT_EQ(runs.Get("vnosuch").status().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace ferry::cli
