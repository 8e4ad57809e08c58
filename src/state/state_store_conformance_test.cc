// The StateStore conformance suite (state_store_conformance_test.h): the
// fixture, and the cases for jobs, runners, listing and persistence. Cases
// for object rows (claims, outcomes, uploads) are in
// state_store_conformance_work_test.cc.

#include "state/state_store_conformance_test.h"

#include <stdlib.h>

#include <filesystem>

namespace ferry::state {

ShardRecord PrefixShard(int shard, std::string prefix, std::string delimiter, int64_t seq,
                        std::string token, bool done) {
  ShardRecord s;
  s.shard = shard;
  s.prefix = std::move(prefix);
  s.delimiter = std::move(delimiter);
  s.seq = seq;
  s.token = std::move(token);
  s.done = done;
  return s;
}

std::string StateStoreParamName(const ::testing::TestParamInfo<StateStoreParam>& info) {
  return info.param.name;
}

void PrintTo(const StateStoreParam& param, std::ostream* os) { *os << param.name; }

void StateStoreConformanceTest::SetUp() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "ferry-state-test-XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr) << "mkdtemp " << tmpl;
  dir_ = tmpl;
  auto made = GetParam().factory(dir_);
  if (IsSkipped()) return;  // the factory has no server to use here
  ASSERT_TRUE(made.ok()) << GetParam().name << ": " << made.status().ToString();
  store_ = std::move(*made);
}

void StateStoreConformanceTest::TearDown() {
  store_.reset();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::unique_ptr<StateStore> StateStoreConformanceTest::OpenAnother() {
  auto made = GetParam().factory(dir_);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  return made.ok() ? std::move(*made) : nullptr;
}

void StateStoreConformanceTest::Reopen() {
  store_.reset();
  store_ = OpenAnother();
  ASSERT_NE(store_, nullptr);
}

void StateStoreConformanceTest::MakeJob(const std::string& id, int64_t created_ms,
                                        std::vector<ShardRecord> shards) {
  JobRecord job;
  job.id = id;
  job.src = "s3://src/" + id;
  job.dst = "s3://dst/" + id;
  job.spec = R"({"id":")" + id + R"("})";
  job.created_ms = created_ms;
  Status s = store_->CreateJob(job, shards);
  ASSERT_TRUE(s.ok()) << s.ToString();
}

JobRecord StateStoreConformanceTest::Job(const std::string& id) {
  auto job = store_->GetJob(id);
  EXPECT_TRUE(job.ok()) << job.status().ToString();
  return job.ok() ? *job : JobRecord{};
}

ListPageResult StateStoreConformanceTest::Enqueue(const std::string& job,
                                                  const std::vector<std::string>& keys, bool done) {
  auto shards = store_->GetShards(job);
  EXPECT_TRUE(shards.ok()) << shards.status().ToString();
  if (!shards.ok()) return {};
  ListPageCommit page;
  page.shard = 0;
  page.seq = shards->front().seq + 1;
  page.done = done;
  page.next_token = done ? "" : "token-" + std::to_string(page.seq);
  for (const std::string& k : keys) page.objects.push_back({k, k.size(), "etag-" + k, 7});
  auto r = store_->CommitListPage(job, page);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r.ok() && r->applied);
  return r.ok() ? *r : ListPageResult{};
}

std::vector<std::string> StateStoreConformanceTest::ClaimKeys(const std::string& job,
                                                              const std::string& owner, int max,
                                                              int64_t now_ms,
                                                              int64_t lease_until_ms) {
  auto claimed = store_->Claim(job, owner, max, now_ms, lease_until_ms);
  EXPECT_TRUE(claimed.ok()) << claimed.status().ToString();
  std::vector<std::string> keys;
  if (claimed.ok()) {
    for (const ClaimedObject& c : *claimed) keys.push_back(c.object.key);
  }
  return keys;
}

int StateStoreConformanceTest::FinishKeys(const std::string& job, const std::string& owner,
                                          const std::vector<std::string>& keys) {
  std::vector<FinishedObject> done;
  for (const std::string& k : keys) done.push_back({k, Outcome::kTransferred, k.size()});
  auto r = store_->Finish(job, owner, done);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  int n = 0;
  if (r.ok()) {
    for (bool b : *r) n += b ? 1 : 0;
  }
  return n;
}

void StateStoreConformanceTest::ExpectBalanced(const std::string& job) {
  JobCounters c = Job(job).counters;
  EXPECT_EQ(c.transferred + c.skipped + c.failed + c.pending, c.listed)
      << "transferred " << c.transferred << " skipped " << c.skipped << " failed " << c.failed
      << " pending " << c.pending << " listed " << c.listed;
  auto dlq = store_->ListDeadLetters(job);
  ASSERT_TRUE(dlq.ok()) << dlq.status().ToString();
  EXPECT_EQ(static_cast<int64_t>(dlq->size()), c.failed);
}

std::vector<std::string> NumberedKeys(int n, const std::string& prefix) {
  std::vector<std::string> keys;
  char buf[16];
  for (int i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof(buf), "%05d", i);
    keys.push_back(prefix + buf);
  }
  return keys;
}

namespace {

TEST(JobStateNames, EveryStateRoundTrips) {
  const struct {
    JobState state;
    const char* name;
  } cases[] = {
      {JobState::kCreated, "created"},         {JobState::kRunning, "running"},
      {JobState::kCompleted, "completed"},     {JobState::kFailed, "failed"},
      {JobState::kCancelling, "cancelling"},   {JobState::kCancelled, "cancelled"},
      {JobState::kInterrupted, "interrupted"},
  };
  for (const auto& c : cases) {
    EXPECT_STREQ(ToString(c.state), c.name);
    EXPECT_EQ(JobStateFromString(c.name), c.state) << c.name;
  }
  EXPECT_EQ(JobStateFromString("Running"), std::nullopt);
  EXPECT_EQ(JobStateFromString(""), std::nullopt);
}

TEST_P(StateStoreConformanceTest, CreatesGetsAndListsJobsNewestFirst) {
  MakeJob("a", 1000);
  MakeJob("b", 3000);
  MakeJob("c", 2000);
  MakeJob("d", 2000);

  JobRecord a = Job("a");
  EXPECT_EQ(a.id, "a");
  EXPECT_EQ(a.src, "s3://src/a");
  EXPECT_EQ(a.dst, "s3://dst/a");
  EXPECT_EQ(a.spec, R"({"id":"a"})");
  EXPECT_EQ(a.state, JobState::kCreated);
  EXPECT_EQ(a.created_ms, 1000);
  EXPECT_EQ(a.started_ms, 0);
  EXPECT_EQ(a.finished_ms, 0);
  EXPECT_FALSE(a.listing_done);
  EXPECT_EQ(a.runner, "");
  EXPECT_EQ(a.counters.listed, 0);
  EXPECT_EQ(a.counters.pending, 0);

  auto jobs = store().ListJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  std::vector<std::string> ids;
  for (const JobRecord& j : *jobs) ids.push_back(j.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"b", "c", "d", "a"}));

  // Shard 0 exists even when none was given.
  auto shards = store().GetShards("a");
  ASSERT_TRUE(shards.ok()) << shards.status().ToString();
  ASSERT_EQ(shards->size(), 1u);
  EXPECT_EQ(shards->front().shard, 0);
  EXPECT_EQ(shards->front().seq, 0);
  EXPECT_FALSE(shards->front().done);
}

TEST_P(StateStoreConformanceTest, DuplicateAndUnknownJobsAreErrors) {
  MakeJob("a");
  JobRecord dup;
  dup.id = "a";
  dup.src = "s3://other";
  EXPECT_EQ(store().CreateJob(dup, {}).code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(Job("a").src, "s3://src/a");

  EXPECT_EQ(store().GetJob("nope").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(store().GetShards("nope").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(store().AcquireJob("nope", "r", 1, 2, false).code(), ErrorCode::kNotFound);
  EXPECT_EQ(store().SetJobState("nope", JobState::kFailed, 1, 0, true).code(),
            ErrorCode::kNotFound);
  ListPageCommit page;
  page.seq = 1;
  EXPECT_EQ(store().CommitListPage("nope", page).status().code(), ErrorCode::kNotFound);
  page.shard = 7;  // no such shard (as after a fallback replaced them): not applied
  auto none = store().CommitListPage("a", page);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->applied);
}

TEST_P(StateStoreConformanceTest, StatesRoundTripAndFinalStatesStampFinishTime) {
  const struct {
    JobState state;
    bool final;
  } cases[] = {
      {JobState::kCreated, false},     {JobState::kRunning, false},    {JobState::kCompleted, true},
      {JobState::kFailed, true},       {JobState::kCancelling, false}, {JobState::kCancelled, true},
      {JobState::kInterrupted, false},
  };
  for (const auto& c : cases) {
    const std::string id = std::string("job-") + ToString(c.state);
    MakeJob(id);
    ASSERT_TRUE(store().SetJobState(id, c.state, 5000, 1.5, false).ok());
    ASSERT_TRUE(store().SetJobState(id, c.state, 6000, 2.25, false).ok());
    JobRecord j = Job(id);
    EXPECT_EQ(j.state, c.state) << id;
    EXPECT_EQ(j.finished_ms, c.final ? 6000 : 0) << id;
    EXPECT_DOUBLE_EQ(j.run_seconds, 3.75) << id;
  }
}

TEST_P(StateStoreConformanceTest, ACompletedJobKeepsNoShardsAFailedOneKeepsThem) {
  const std::vector<ShardRecord> shards = {PrefixShard(0, "", "/", 3, "t", true),
                                           PrefixShard(1, "p/", "", 2, "", true)};
  MakeJob("done", 1, shards);
  MakeJob("failed", 1, shards);
  ASSERT_TRUE(store().SetJobState("done", JobState::kCompleted, 5000, 1, true).ok());
  ASSERT_TRUE(store().SetJobState("failed", JobState::kFailed, 5000, 1, true).ok());
  auto done = store().GetShards("done");
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_TRUE(done->empty());  // pruned: nothing will list for it again
  EXPECT_TRUE(Job("done").listing_done);
  auto failed = store().GetShards("failed");
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->size(), 2u);  // `dlq --retry` may run it again
}

TEST_P(StateStoreConformanceTest, AcquireRenewAndReleaseTheRunnerClaim) {
  MakeJob("j");
  ASSERT_TRUE(store().AcquireJob("j", "r1", 1000, 5000, false).ok());
  JobRecord j = Job("j");
  EXPECT_EQ(j.state, JobState::kRunning);
  EXPECT_EQ(j.started_ms, 1000);
  EXPECT_EQ(j.runner, "r1");
  EXPECT_EQ(j.runner_until_ms, 5000);

  const struct {
    const char* runner;
    int64_t now_ms;
    bool force;
    ErrorCode want;
    const char* holder_after;
  } steps[] = {
      {"r2", 2000, false, ErrorCode::kPreconditionFailed, "r1"},  // r1 is live
      {"r2", 4999, false, ErrorCode::kPreconditionFailed, "r1"},
      {"r1", 2000, false, ErrorCode::kOk, "r1"},  // its own claim
      {"r2", 7000, false, ErrorCode::kOk, "r2"},  // r1's expired
      {"r3", 7500, true, ErrorCode::kOk, "r3"},   // forced
  };
  for (const auto& s : steps) {
    Status st = store().AcquireJob("j", s.runner, s.now_ms, s.now_ms + 4000, s.force);
    EXPECT_EQ(st.code(), s.want) << s.runner << "@" << s.now_ms << ": " << st.ToString();
    if (s.want == ErrorCode::kPreconditionFailed) {
      EXPECT_NE(st.message().find("r1"), std::string::npos) << st.message();
    }
    EXPECT_EQ(Job("j").runner, s.holder_after);
  }
  EXPECT_EQ(Job("j").started_ms, 1000);  // the first run's start stays

  ASSERT_TRUE(store().RenewJob("j", "r3", 20000).ok());
  EXPECT_EQ(Job("j").runner_until_ms, 20000);
  EXPECT_EQ(store().RenewJob("j", "r2", 30000).code(), ErrorCode::kPreconditionFailed);
  EXPECT_EQ(Job("j").runner_until_ms, 20000);

  ASSERT_TRUE(store().SetJobState("j", JobState::kCompleted, 9000, 2.5, true).ok());
  j = Job("j");
  EXPECT_EQ(j.state, JobState::kCompleted);
  EXPECT_EQ(j.runner, "");
  EXPECT_EQ(j.runner_until_ms, 0);
  EXPECT_EQ(j.finished_ms, 9000);
  EXPECT_DOUBLE_EQ(j.run_seconds, 2.5);
  EXPECT_EQ(store().RenewJob("j", "r3", 30000).code(), ErrorCode::kPreconditionFailed);
  // Released: anyone may take it at once.
  EXPECT_TRUE(store().AcquireJob("j", "r4", 9500, 12000, false).ok());
}

TEST_P(StateStoreConformanceTest, ListPagesApplyOnlyInSequence) {
  MakeJob("j");
  const struct {
    int64_t seq;
    std::vector<std::string> keys;
    bool applied;
    int64_t listed_after;
    int64_t shard_seq_after;
  } steps[] = {
      {1, {"a", "b"}, true, 2, 1}, {2, {"c"}, true, 3, 2}, {2, {"x"}, false, 3, 2},  // replayed
      {1, {"y"}, false, 3, 2},                                                       // older
      {5, {"z"}, false, 3, 2},                                                       // a gap
      {0, {"w"}, false, 3, 2},     {3, {"d"}, true, 4, 3},
  };
  for (const auto& s : steps) {
    ListPageCommit page;
    page.seq = s.seq;
    page.next_token = "t" + std::to_string(s.seq);
    for (const std::string& k : s.keys) page.objects.push_back({k, 1, "e", 0});
    auto r = store().CommitListPage("j", page);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->applied, s.applied) << "seq " << s.seq;
    EXPECT_EQ(r->enqueued, s.applied ? static_cast<int64_t>(s.keys.size()) : 0);
    JobRecord j = Job("j");
    EXPECT_EQ(j.counters.listed, s.listed_after) << "seq " << s.seq;
    EXPECT_EQ(j.counters.pending, s.listed_after) << "seq " << s.seq;
    auto shards = store().GetShards("j");
    ASSERT_TRUE(shards.ok());
    EXPECT_EQ(shards->front().seq, s.shard_seq_after);
    EXPECT_EQ(shards->front().token, "t" + std::to_string(s.shard_seq_after));
  }
  EXPECT_EQ(ClaimKeys("j", "o", 10, 1), (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST_P(StateStoreConformanceTest, KeysAreCountedOncePerJob) {
  MakeJob("j", 1, {PrefixShard(0, "", "/", 0, "", false), PrefixShard(1, "p/", "", 0, "", false)});
  MakeJob("other");
  EXPECT_EQ(Enqueue("j", {"a", "a", "b"}).enqueued, 2);  // within a page
  ListPageCommit page;
  page.shard = 1;
  page.seq = 1;
  page.done = true;
  page.objects = {{"b", 1, "e", 0}, {"c", 1, "e", 0}};  // across shards
  auto r = store().CommitListPage("j", page);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->enqueued, 1);
  EXPECT_EQ(Job("j").counters.listed, 3);
  EXPECT_EQ(Job("j").counters.pending, 3);
  // Jobs are independent: the same keys count again in another job.
  EXPECT_EQ(Enqueue("other", {"a", "b", "c"}).enqueued, 3);
  ExpectBalanced("j");
}

TEST_P(StateStoreConformanceTest, NewShardsAreAppendedAndListingEndsWithTheLast) {
  MakeJob("j", 1, {PrefixShard(0, "data/", "/", 0, "", false)});
  auto commit = [&](int shard, int64_t seq, bool done, std::vector<std::string> new_shards) {
    ListPageCommit page;
    page.shard = shard;
    page.seq = seq;
    page.done = done;
    page.next_token = done ? "" : "more";
    page.new_shards = std::move(new_shards);
    page.objects = {{"data/" + std::to_string(shard) + "-" + std::to_string(seq), 1, "e", 0}};
    auto r = store().CommitListPage("j", page);
    ASSERT_TRUE(r.ok() && r->applied) << r.status().ToString();
  };
  commit(0, 1, true, {"data/a/", "data/b/"});
  auto shards = store().GetShards("j");
  ASSERT_TRUE(shards.ok());
  ASSERT_EQ(shards->size(), 3u);
  const struct {
    int shard;
    const char* prefix;
    const char* delimiter;
    bool done;
  } want[] = {{0, "data/", "/", true}, {1, "data/a/", "", false}, {2, "data/b/", "", false}};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*shards)[i].shard, want[i].shard);
    EXPECT_EQ((*shards)[i].prefix, want[i].prefix);
    EXPECT_EQ((*shards)[i].delimiter, want[i].delimiter);
    EXPECT_EQ((*shards)[i].done, want[i].done);
    EXPECT_EQ((*shards)[i].seq, i == 0 ? 1 : 0);
    EXPECT_EQ((*shards)[i].token, "");
  }
  EXPECT_FALSE(Job("j").listing_done);
  commit(1, 1, true, {"data/a/x/"});  // becomes shard 3
  EXPECT_FALSE(Job("j").listing_done);
  commit(2, 1, false, {});
  EXPECT_EQ(store().GetShards("j")->at(2).token, "more");
  EXPECT_FALSE(Job("j").listing_done);
  commit(2, 2, true, {});
  EXPECT_FALSE(Job("j").listing_done);  // shard 3 is left
  shards = store().GetShards("j");
  ASSERT_EQ(shards->size(), 4u);
  EXPECT_EQ(shards->back().shard, 3);
  EXPECT_EQ(shards->back().prefix, "data/a/x/");
  commit(3, 1, true, {});
  EXPECT_TRUE(Job("j").listing_done);
  EXPECT_EQ(Job("j").counters.listed, 5);
}

TEST_P(StateStoreConformanceTest, EverythingPersistsAcrossReopen) {
  MakeJob("j", 1, {PrefixShard(0, "p/", "/", 0, "", false)});
  ASSERT_TRUE(store().AcquireJob("j", "r1", 100, 60000, false).ok());
  Enqueue("j", {"a", "b", "c", "d"});
  ASSERT_EQ(ClaimKeys("j", "o1", 3, 200, 50000).size(), 3u);
  ASSERT_EQ(FinishKeys("j", "o1", {"a"}), 1);
  DeadLetter dl{"b", 0, "access denied", 2, "403 AccessDenied", 300};
  ASSERT_TRUE(*store().DeadLetterObject("j", "o1", dl));
  UploadRecord up{"upload-1", "etag-c", 8 << 20, {{1, "p1", 8 << 20}}};
  ASSERT_TRUE(store().SaveUpload("j", "c", up).ok());

  Reopen();
  JobRecord j = Job("j");
  EXPECT_EQ(j.state, JobState::kRunning);
  EXPECT_EQ(j.runner, "r1");
  EXPECT_EQ(j.runner_until_ms, 60000);
  EXPECT_EQ(j.started_ms, 100);
  EXPECT_EQ(j.counters.listed, 4);
  EXPECT_EQ(j.counters.transferred, 1);
  EXPECT_EQ(j.counters.failed, 1);
  EXPECT_EQ(j.counters.pending, 2);
  EXPECT_EQ(j.counters.bytes, 1);
  auto shards = store().GetShards("j");
  ASSERT_TRUE(shards.ok());
  EXPECT_EQ(shards->front().seq, 1);
  EXPECT_EQ(shards->front().token, "token-1");
  EXPECT_EQ(shards->front().delimiter, "/");
  auto dlq = store().ListDeadLetters("j");
  ASSERT_TRUE(dlq.ok());
  ASSERT_EQ(dlq->size(), 1u);
  EXPECT_EQ(dlq->front().reason, "access denied");
  auto got = store().GetUpload("j", "c");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->upload_id, "upload-1");
  ASSERT_EQ((*got)->parts.size(), 1u);
  // The lease survived: c is still o1's, d is free.
  EXPECT_EQ(ClaimKeys("j", "o2", 10, 300, 50000), std::vector<std::string>{"d"});
  EXPECT_EQ(FinishKeys("j", "o1", {"c"}), 1);
  ExpectBalanced("j");
}

}  // namespace
}  // namespace ferry::state
