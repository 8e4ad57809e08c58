// The whole pipeline in-process between local directories: counters exact,
// bytes identical, nothing left in the state store, several jobs at once on
// one state file, dead letters and their requeue.
#include "migrate/runner.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <future>
#include <random>
#include <thread>

#include "migrate/create.h"
#include "migrate/job_spec.h"
#include "state/metered_state_store.h"

namespace ferry::migrate {
namespace {

namespace fs = std::filesystem;

class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-runner-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    auto st = state::OpenSqliteStateStore(root_ + "/state/migrate.db");
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    store_ = std::move(*st);
  }
  void TearDown() override { fs::remove_all(root_); }

  // Writes `n` files of pseudo-random sizes under root_/name; returns bytes.
  uint64_t MakeTree(const std::string& name, int n, int dirs, uint32_t seed) {
    std::mt19937 rng(seed);
    uint64_t total = 0;
    for (int i = 0; i < n; ++i) {
      fs::path dir = fs::path(root_) / name / ("d" + std::to_string(i % dirs));
      fs::create_directories(dir);
      std::string body(rng() % 3000, '\0');
      for (auto& c : body) c = static_cast<char>(rng());
      std::ofstream(dir / ("f" + std::to_string(i)), std::ios::binary) << body;
      total += body.size();
    }
    return total;
  }

  static std::string Slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // Every regular, non-hidden file below `a` has an identical twin in `b`,
  // and `b` has no others.
  void ExpectSameTree(const std::string& a, const std::string& b) {
    int files = 0;
    for (const auto& e : fs::recursive_directory_iterator(a)) {
      if (!e.is_regular_file()) continue;
      fs::path rel = fs::relative(e.path(), a);
      ASSERT_TRUE(fs::exists(fs::path(b) / rel)) << rel;
      EXPECT_EQ(Slurp(e.path()), Slurp(fs::path(b) / rel)) << rel;
      ++files;
    }
    int other = 0;
    for (const auto& e : fs::recursive_directory_iterator(b)) {
      if (e.is_regular_file() && e.path().filename().string()[0] != '.') ++other;
    }
    EXPECT_EQ(files, other);
  }

  Result<state::JobRecord> Create(const std::string& src, const std::string& dst, int lc) {
    JobSpec spec;
    spec.src = root_ + "/" + src;
    spec.dst = root_ + "/" + dst;
    spec.concurrency = 8;
    spec.list_concurrency = lc;
    return CreateJob(*store_, spec, OpenOptions{});
  }

  std::string root_;
  std::unique_ptr<state::StateStore> store_;
};

TEST_F(RunnerTest, CopiesATreeExactlyAndPrunesState) {
  uint64_t bytes = MakeTree("src", 1500, 7, 1);
  for (int lc : {1, 4}) {
    std::string dst = "dst" + std::to_string(lc);
    auto job = Create("src", dst, lc);
    ASSERT_TRUE(job.ok()) << job.status().ToString();
    auto r = RunJob(*store_, job->id, RunOptions{});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const auto& c = r->job.counters;
    EXPECT_EQ(r->job.state, state::JobState::kCompleted);
    EXPECT_EQ(c.listed, 1500);
    EXPECT_EQ(c.transferred, 1500);
    EXPECT_EQ(c.skipped + c.failed + c.pending, 0);
    EXPECT_EQ(static_cast<uint64_t>(c.bytes), bytes);
    EXPECT_EQ(*store_->CountRows(job->id), 0);
    ExpectSameTree(root_ + "/src", root_ + "/" + dst);
  }
}

// Many multipart objects at once with a buffer budget of one part: parts
// wait for their turn to be hashed (end-to-end MD5) while holding buffers,
// which must never starve the parts they wait for.
TEST_F(RunnerTest, ManyMultipartObjectsShareASmallBufferBudget) {
  std::mt19937 rng(7);
  for (int i = 0; i < 4; ++i) {
    fs::create_directories(root_ + "/big");
    std::string body((20 << 20) + i * 1000, '\0');
    for (auto& c : body) c = static_cast<char>(rng());
    std::ofstream(root_ + "/big/o" + std::to_string(i), std::ios::binary) << body;
  }
  JobSpec spec;
  spec.src = root_ + "/big";
  spec.dst = root_ + "/bigdst";
  spec.concurrency = 8;
  spec.part_concurrency = 4;
  spec.multipart_threshold = 8 << 20;
  spec.part_size = 5 << 20;  // the smallest: 5 parts each
  auto job = CreateJob(*store_, spec, OpenOptions{});
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  RunOptions o;
  o.buffer_budget = 5 << 20;  // one part at a time
  auto run = std::async(std::launch::async, [&] { return RunJob(*store_, job->id, o); });
  if (run.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    std::fprintf(stderr, "RunJob did not finish in 60 s: parts deadlocked on the budget\n");
    std::abort();  // the stuck threads cannot be joined
  }
  auto r = run.get();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->job.state, state::JobState::kCompleted);
  EXPECT_EQ(r->job.counters.transferred, 4);
  // 16 parts of 5 MiB, one at a time: after the first, each part's buffer
  // is the last one's (no fresh, page-faulting allocation per part).
  EXPECT_GE(r->buffers_reused, 15u);
  ExpectSameTree(root_ + "/big", root_ + "/bigdst");
}

TEST_F(RunnerTest, SecondRunSkipsEverythingAndCopiesChanges) {
  MakeTree("src", 300, 3, 2);
  auto first = Create("src", "dst", 1);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(RunJob(*store_, first->id, RunOptions{}).ok());
  std::ofstream(root_ + "/src/d0/f0", std::ios::binary | std::ios::trunc) << "changed!";
  auto second = Create("src", "dst", 1);
  ASSERT_TRUE(second.ok());
  auto r = RunJob(*store_, second->id, RunOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->job.counters.transferred, 1);
  EXPECT_EQ(r->job.counters.skipped, 299);
  EXPECT_EQ(Slurp(root_ + "/dst/d0/f0"), "changed!");
}

TEST_F(RunnerTest, JobsRunConcurrentlyOnOneStateFile) {
  for (int j = 0; j < 3; ++j) MakeTree("src" + std::to_string(j), 400, 4, 10 + j);
  std::vector<std::string> ids;
  for (int j = 0; j < 3; ++j) {
    auto job = Create("src" + std::to_string(j), "dst" + std::to_string(j), 2);
    ASSERT_TRUE(job.ok());
    ids.push_back(job->id);
  }
  std::atomic<int> ok{0};
  std::vector<std::thread> runs;
  for (int j = 0; j < 3; ++j) {
    runs.emplace_back([&, j] {
      // Each as its own "process": its own connection to the state file.
      auto st = state::OpenSqliteStateStore(root_ + "/state/migrate.db");
      if (!st.ok()) return;
      auto r = RunJob(**st, ids[static_cast<size_t>(j)], RunOptions{});
      if (r.ok() && r->job.state == state::JobState::kCompleted &&
          r->job.counters.transferred == 400) {
        ++ok;
      }
    });
  }
  for (auto& t : runs) t.join();
  EXPECT_EQ(ok.load(), 3);
  for (int j = 0; j < 3; ++j) {
    ExpectSameTree(root_ + "/src" + std::to_string(j), root_ + "/dst" + std::to_string(j));
  }
}

TEST_F(RunnerTest, UnwritableKeysAreDeadLetteredAndRequeued) {
  MakeTree("src", 50, 1, 3);
  // A file where the destination needs a directory: every key under d0/
  // conflicts (kAlreadyExists), a permanent error.
  fs::create_directories(root_ + "/dst");
  std::ofstream(root_ + "/dst/d0") << "in the way";
  auto job = Create("src", "dst", 1);
  ASSERT_TRUE(job.ok());
  auto r = RunJob(*store_, job->id, RunOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->job.state, state::JobState::kFailed);
  EXPECT_EQ(r->job.counters.failed, 50);
  auto dl = store_->ListDeadLetters(job->id);
  ASSERT_TRUE(dl.ok());
  ASSERT_EQ(dl->size(), 50u);
  EXPECT_EQ((*dl)[0].reason, "conflicts at destination");
  EXPECT_EQ((*dl)[0].attempts, 1);
  // The failed job went to the archive, dead letters and all; it comes back
  // (as `dlq --retry` brings it), the obstacle goes, the requeued keys
  // complete.
  EXPECT_TRUE(r->job.archived);
  ASSERT_TRUE(store_->RestoreJob(job->id).ok());
  fs::remove(root_ + "/dst/d0");
  ASSERT_EQ(*store_->RequeueDeadLetters(job->id), 50);
  r = RunJob(*store_, job->id, RunOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->job.state, state::JobState::kCompleted);
  EXPECT_EQ(r->job.counters.transferred, 50);
  EXPECT_EQ(r->job.counters.failed, 0);
  ExpectSameTree(root_ + "/src", root_ + "/dst");
}

TEST_F(RunnerTest, ALiveRunnerKeepsItsJob) {
  MakeTree("src", 10, 1, 4);
  auto job = Create("src", "dst", 1);
  ASSERT_TRUE(job.ok());
  int64_t now = 1;
  // Someone alive (this very process, under another runner id) holds it.
  std::string other = NewRunnerId();
  int64_t far = INT64_C(4'000'000'000'000);
  ASSERT_TRUE(store_->AcquireJob(job->id, other, now, far, false).ok());
  auto r = RunJob(*store_, job->id, RunOptions{});
  EXPECT_EQ(r.status().code(), ErrorCode::kPreconditionFailed);
  EXPECT_FALSE(RunnerIsDead(other));
  // A runner id naming a process that does not exist is dead.
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  EXPECT_TRUE(RunnerIsDead(std::string(host) + ":999999999:x"));
  EXPECT_FALSE(RunnerIsDead("otherhost:1:x"));  // another machine: wait for its lease
}

// A state store under heavy load: renewals fail, and the first claim
// answers late, when too little of those objects' lease is left to write.
class LateFirstClaim : public state::MeteredStateStore {
 public:
  LateFirstClaim(state::StateStore& inner, std::chrono::milliseconds late)
      : MeteredStateStore(inner), late_(late) {}
  Result<std::vector<state::ClaimedObject>> Claim(const std::string& job, const std::string& owner,
                                                  int max, int64_t now_ms,
                                                  int64_t lease_until_ms) override {
    auto r = MeteredStateStore::Claim(job, owner, max, now_ms, lease_until_ms);
    if (r.ok() && !r->empty() && !slowed_.exchange(true)) {
      first_batch_ = static_cast<int>(r->size());
      std::this_thread::sleep_for(late_);
    }
    return r;
  }
  // Renewals fail throughout: what a claim took is all a lease has.
  Status RenewLeases(const std::string&, const std::string&, int64_t) override {
    return Status::Network("the state store is too busy to renew");
  }
  Result<bool> Release(const std::string& job, const std::string& owner, const std::string& key,
                       int64_t not_before_ms) override {
    ++released_;
    return MeteredStateStore::Release(job, owner, key, not_before_ms);
  }
  std::atomic<int> first_batch_{0}, released_{0};

 private:
  const std::chrono::milliseconds late_;
  std::atomic<bool> slowed_{false};
};

TEST_F(RunnerTest, ObjectsWhoseLeaseIsNearlyOverAreReleasedUnwritten) {
  MakeTree("src", 40, 2, 9);
  auto job = Create("src", "dst", 1);
  ASSERT_TRUE(job.ok());
  // A 400 ms lease: writes need 200 ms of it left; the first batch's claim
  // returns after 300 ms. Another runner could claim those objects 100 ms
  // later, so this one must not write them: it gives them back, and claims
  // them again (a fresh lease) to copy them.
  LateFirstClaim late(*store_, std::chrono::milliseconds(300));
  RunOptions o;
  o.lease = std::chrono::milliseconds(400);
  auto r = RunJob(late, job->id, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->job.state, state::JobState::kCompleted);
  EXPECT_EQ(r->job.counters.transferred, 40);
  EXPECT_EQ(r->job.counters.failed, 0);
  EXPECT_GT(late.first_batch_.load(), 0);
  EXPECT_GE(late.released_.load(), late.first_batch_.load());
  ExpectSameTree(root_ + "/src", root_ + "/dst");
}

// A job's spec is JSON text: a path that is not UTF-8 (a directory named in
// Latin-1) is refused with one line before anything is recorded, not kept
// altered or thrown on.
TEST_F(RunnerTest, PathsThatAreNotUtf8AreRefusedBeforeAnythingIsRecorded) {
  fs::create_directories(root_ + "/caf\xe9");
  JobSpec spec;
  spec.src = root_ + "/caf\xe9";
  spec.dst = root_ + "/out";
  auto job = CreateJob(*store_, spec, OpenOptions{});
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(job.status().message().find("the source is not UTF-8"), std::string::npos) << job.status().ToString();
  spec.src = root_;
  spec.filter.include = {"*.\xff"};
  EXPECT_EQ(CreateJob(*store_, spec, OpenOptions{}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(store_->ListJobs()->empty());
  EXPECT_FALSE(fs::exists(root_ + "/out"));
}

}  // namespace
}  // namespace ferry::migrate
