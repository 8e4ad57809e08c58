// StateStore conformance (state_store_conformance_test.h): the archive.
// Finished jobs move out of the live tables with their summary and their
// dead letters, stay readable, and can be brought back to requeue them.

#include <algorithm>

#include "state/state_store_conformance_test.h"

namespace ferry::state {
namespace {

using Keys = std::vector<std::string>;

std::vector<std::string> Ids(const std::vector<JobRecord>& jobs) {
  std::vector<std::string> ids;
  for (const JobRecord& j : jobs) ids.push_back(j.id);
  return ids;
}

TEST_P(StateStoreConformanceTest, AFinishedJobMovesToTheArchiveWithItsDeadLetters) {
  MakeJob("done", 1000);
  MakeJob("live", 2000);
  Enqueue("done", {"a", "bb", "ccc"}, /*done=*/true);
  ASSERT_EQ(ClaimKeys("done", "o", 10, 0).size(), 3u);
  EXPECT_EQ(FinishKeys("done", "o", {"a", "ccc"}), 2);
  DeadLetter d{"bb", 0, "access denied", 2, "403", 77};
  ASSERT_TRUE(*store().DeadLetterObject("done", "o", d));

  // Not finished yet: refused, nothing moves.
  Status early = store().ArchiveJob("done", 5000);
  EXPECT_EQ(early.code(), ErrorCode::kPreconditionFailed) << early.ToString();
  ASSERT_TRUE(store().SetJobState("done", JobState::kFailed, 4000, 1.5, true).ok());
  ASSERT_TRUE(store().ArchiveJob("done", 5000).ok());
  EXPECT_TRUE(store().ArchiveJob("done", 6000).ok()) << "archiving twice changes nothing";
  EXPECT_EQ(store().ArchiveJob("nope", 1).code(), ErrorCode::kNotFound);

  auto live = store().ListJobs();
  ASSERT_TRUE(live.ok());
  EXPECT_EQ(Ids(*live), Keys{"live"});
  Reopen();  // the archive is durable
  auto archived = store().ListArchivedJobs();
  ASSERT_TRUE(archived.ok()) << archived.status().ToString();
  EXPECT_EQ(Ids(*archived), Keys{"done"});
  JobRecord j = Job("done");
  EXPECT_TRUE(j.archived);
  EXPECT_EQ(j.archived_ms, 5000);
  EXPECT_EQ(j.state, JobState::kFailed);
  EXPECT_EQ(j.finished_ms, 4000);
  EXPECT_EQ(j.counters.listed, 3);
  EXPECT_EQ(j.counters.transferred, 2);
  EXPECT_EQ(j.counters.failed, 1);
  EXPECT_EQ(j.counters.bytes, 4);  // "a" and "ccc"
  EXPECT_FALSE(Job("live").archived);
  auto dlq = store().ListDeadLetters("done");
  ASSERT_TRUE(dlq.ok());
  ASSERT_EQ(dlq->size(), 1u);
  EXPECT_EQ(dlq->front().key, "bb");
  EXPECT_EQ(dlq->front().reason, "access denied");
  auto rows = store().CountRows("done");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows, 0) << "no live row is left for an archived job";
  auto shards = store().GetShards("done");
  EXPECT_FALSE(shards.ok() && !shards->empty());
  // Its id stays taken.
  JobRecord again;
  again.id = "done";
  again.spec = "{}";
  EXPECT_EQ(store().CreateJob(again, {}).code(), ErrorCode::kAlreadyExists);

  // Brought back to requeue its dead letters.
  ASSERT_TRUE(store().RestoreJob("done").ok());
  EXPECT_TRUE(store().RestoreJob("done").ok()) << "a live job is left as it is";
  j = Job("done");
  EXPECT_FALSE(j.archived);
  EXPECT_EQ(j.counters.failed, 1);
  auto archived_now = store().ListArchivedJobs();
  ASSERT_TRUE(archived_now.ok());
  EXPECT_TRUE(archived_now->empty());
  auto n = store().RequeueDeadLetters("done");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(ClaimKeys("done", "o2", 10, 0), Keys{"bb"});
  ExpectBalanced("done");
}

TEST_P(StateStoreConformanceTest, ACancelledJobIsArchivedWithoutItsPendingKeys) {
  MakeJob("c");
  Enqueue("c", NumberedKeys(20));
  ASSERT_EQ(ClaimKeys("c", "o", 5, 0).size(), 5u);
  ASSERT_TRUE(store().SaveUpload("c", "k00001", {"up-1", "e", 5, {{1, "p1", 5}}}).ok());
  ASSERT_TRUE(store().SetJobState("c", JobState::kCancelled, 9, 0, true).ok());
  ASSERT_TRUE(store().ArchiveJob("c", 10).ok());
  auto rows = store().CountRows("c");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows, 0);
  JobRecord j = Job("c");
  EXPECT_TRUE(j.archived);
  EXPECT_EQ(j.state, JobState::kCancelled);
  EXPECT_EQ(j.counters.pending, 20) << "the summary says what was left undone";
  Status back = store().RestoreJob("c");
  EXPECT_EQ(back.code(), ErrorCode::kPreconditionFailed) << back.ToString();
  EXPECT_TRUE(Job("c").archived);
}

// Archiving, restoring, failing again and archiving again: the archive
// holds the newest dead letters, the same in both stores (they once
// differed: INSERT OR REPLACE in one, ON CONFLICT DO NOTHING in the other).
TEST_P(StateStoreConformanceTest, ArchivingAgainKeepsTheNewestDeadLetters) {
  MakeJob("j");
  Enqueue("j", {"k"}, /*done=*/true);
  ASSERT_EQ(ClaimKeys("j", "o", 10, 0).size(), 1u);
  ASSERT_TRUE(*store().DeadLetterObject("j", "o", DeadLetter{"k", 0, "first", 1, "500", 1}));
  ASSERT_TRUE(store().SetJobState("j", JobState::kFailed, 2, 0, true).ok());
  ASSERT_TRUE(store().ArchiveJob("j", 3).ok());
  ASSERT_TRUE(store().RestoreJob("j").ok());
  ASSERT_EQ(*store().RequeueDeadLetters("j"), 1);
  ASSERT_EQ(ClaimKeys("j", "o2", 10, 0), Keys{"k"});
  ASSERT_TRUE(*store().DeadLetterObject("j", "o2", DeadLetter{"k", 0, "second", 2, "403", 4}));
  ASSERT_TRUE(store().SetJobState("j", JobState::kFailed, 5, 0, true).ok());
  ASSERT_TRUE(store().ArchiveJob("j", 6).ok());
  auto dlq = store().ListDeadLetters("j");
  ASSERT_TRUE(dlq.ok()) << dlq.status().ToString();
  ASSERT_EQ(dlq->size(), 1u);
  EXPECT_EQ(dlq->front().reason, "second");
  EXPECT_EQ(dlq->front().last_error, "403");
  EXPECT_EQ(Job("j").archived_ms, 6);
}

TEST_P(StateStoreConformanceTest, ARunnersLatestReportIsKeptUntilTheJobIsArchived) {
  MakeJob("a", 1000);
  MakeJob("b", 1000);
  ASSERT_TRUE(store().SetJobLive("a", {2000, R"({"circuits":""})"}).ok());
  ASSERT_TRUE(store().SetJobLive("a", {3000, R"({"circuits":"destination open"})"}).ok());
  ASSERT_TRUE(store().SetJobLive("b", {2500, "{}"}).ok());
  ASSERT_TRUE(store().SetJobLive("nosuch", {2500, "{}"}).ok()) << "a report of no job: dropped";
  Reopen();
  auto live = store().ListJobLive();
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  ASSERT_EQ(live->size(), 2u);
  EXPECT_EQ(live->at("a").at_ms, 3000);  // the latest wins
  EXPECT_EQ(live->at("a").json, R"({"circuits":"destination open"})");
  EXPECT_EQ(live->at("b").at_ms, 2500);
  ASSERT_TRUE(store().SetJobState("a", JobState::kCompleted, 4000, 1, true).ok());
  ASSERT_TRUE(store().ArchiveJob("a", 5000).ok());
  ASSERT_TRUE(store().SetJobLive("a", {6000, "{}"}).ok());  // a late report of an archived job
  live = store().ListJobLive();
  ASSERT_TRUE(live.ok());
  EXPECT_EQ(live->size(), 1u);
  EXPECT_EQ(live->count("a"), 0u);
}

}  // namespace
}  // namespace ferry::state
