// The gateway's key marks (state_store.h KeyMark) in the SQLite store: each
// key is copied by one party at a time and counted once, whether the
// gateway or the bulk copy meets it first, and a key written or deleted
// through the gateway is never enqueued for the bulk copy.

#include <gtest/gtest.h>

#include <map>

#include "base/test_temp_dir.h"
#include "state/state_store.h"

namespace ferry::state {
namespace {

constexpr int64_t kNow = 1'000'000;
constexpr int64_t kLease = kNow + 60'000;

class GatewayMarksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = OpenSqliteStateStore(dir_.path() + "/state.db");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
    JobRecord job;
    job.id = "j";
    ASSERT_TRUE(store_->CreateJob(job, {ShardRecord{}}).ok());
  }

  // Commits the shard's next page with these keys (size 10 each).
  void List(const std::vector<std::string>& keys, bool done = false) {
    ListPageCommit page;
    page.seq = ++seq_;
    page.done = done;
    page.next_token = done ? "" : "t" + std::to_string(seq_);
    for (const auto& k : keys) page.objects.push_back({k, 10, "e-" + k, 1});
    auto r = store_->CommitListPage("j", page);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(r->applied);
  }

  JobCounters Counters() {
    auto j = store_->GetJob("j");
    EXPECT_TRUE(j.ok());
    return j->counters;
  }

  // transferred + skipped + failed + pending = listed, always.
  void ExpectBalanced() {
    JobCounters c = Counters();
    EXPECT_EQ(c.transferred + c.skipped + c.failed + c.pending, c.listed);
  }

  std::vector<std::string> WorkerClaims(int64_t now = kNow) {
    auto rows = store_->Claim("j", "worker", 100, now, now + 60'000);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    std::vector<std::string> keys;
    for (const auto& r : *rows) keys.push_back(r.object.key);
    return keys;
  }

  TestTempDir dir_;
  std::unique_ptr<StateStore> store_;
  int64_t seq_ = 0;
};

TEST_F(GatewayMarksTest, APendingRowClaimedByTheGatewayIsCountedOnceAndNotGivenToWorkers) {
  List({"a", "b"});
  auto c = store_->ClaimKey("j", "a", "gw", kNow, kLease, false);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->kind, KeyClaim::Kind::kClaimed);
  EXPECT_TRUE(c->from_row);
  EXPECT_EQ(c->object.etag, "e-a");
  EXPECT_EQ(WorkerClaims(), std::vector<std::string>{"b"});
  auto m = store_->MarkKey("j", "a", "gw", KeyMark::kCopied, 10, "e-a", kNow);
  ASSERT_TRUE(m.ok() && *m);
  JobCounters k = Counters();
  EXPECT_EQ(k.listed, 2);
  EXPECT_EQ(k.transferred, 1);
  EXPECT_EQ(k.bytes, 10);
  EXPECT_EQ(k.pending, 1);
  ExpectBalanced();
  // Listed again (a relisting shard would): not enqueued, not counted again.
  List({"a"});
  EXPECT_EQ(Counters().listed, 2);
  ExpectBalanced();
}

TEST_F(GatewayMarksTest, AWorkersLeaseMakesTheGatewayWait) {
  List({"a"});
  EXPECT_EQ(WorkerClaims(), std::vector<std::string>{"a"});
  auto c = store_->ClaimKey("j", "a", "gw", kNow, kLease, true);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kind, KeyClaim::Kind::kBusy);
  auto m = store_->MarkKey("j", "a", "gw", KeyMark::kWritten, 3, "w", kNow);
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(*m) << "a write must wait for the worker's copy";
  // The worker finishes: the key has no row and no mark any more.
  auto f = store_->Finish("j", "worker", {{"a", Outcome::kTransferred, 10}});
  ASSERT_TRUE(f.ok());
  c = store_->ClaimKey("j", "a", "gw", kNow, kLease, false);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kind, KeyClaim::Kind::kNone);
}

TEST_F(GatewayMarksTest, AKeyCopiedBeforeItIsListedIsCountedWhenListedAndNeverEnqueued) {
  auto c = store_->ClaimKey("j", "x", "gw", kNow, kLease, true);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kind, KeyClaim::Kind::kClaimed);
  EXPECT_FALSE(c->from_row);
  EXPECT_FALSE(c->listing_done);
  // Listed while the gateway copies: enqueued under the gateway's lease.
  List({"x", "y"});
  EXPECT_EQ(WorkerClaims(), std::vector<std::string>{"y"});
  auto m = store_->MarkKey("j", "x", "gw", KeyMark::kCopied, 10, "e-x", kNow);
  ASSERT_TRUE(m.ok() && *m);
  JobCounters k = Counters();
  EXPECT_EQ(k.listed, 2);
  EXPECT_EQ(k.transferred, 1);
  ExpectBalanced();
  // A key copied and marked before any listing meets it.
  ASSERT_TRUE(store_->ClaimKey("j", "z", "gw", kNow, kLease, true).ok());
  ASSERT_TRUE(*store_->MarkKey("j", "z", "gw", KeyMark::kCopied, 7, "e-z", kNow));
  EXPECT_EQ(Counters().listed, 2) << "not counted before a listing meets it";
  List({"z"}, true);
  k = Counters();
  EXPECT_EQ(k.listed, 3);
  EXPECT_EQ(k.transferred, 2);
  EXPECT_EQ(k.bytes, 17);
  EXPECT_TRUE(WorkerClaims(kNow + 1).empty());
  ExpectBalanced();
  auto again = store_->ClaimKey("j", "z", "gw", kNow, kLease, true);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->kind, KeyClaim::Kind::kRecorded);
  EXPECT_EQ(again->mark, KeyMark::kCopied);
  EXPECT_EQ(again->etag, "e-z");
  EXPECT_TRUE(again->listing_done);
}

TEST_F(GatewayMarksTest, WrittenAndDeletedKeysAreSkippedByTheBulkCopy) {
  List({"pending"});
  for (const char* key : {"pending", "later"}) {
    ASSERT_EQ(store_->ClaimKey("j", key, "gw", kNow, kLease, true)->kind, KeyClaim::Kind::kClaimed);
  }
  ASSERT_TRUE(*store_->MarkKey("j", "pending", "gw", KeyMark::kWritten, 5, "w", kNow));
  ASSERT_TRUE(*store_->MarkKey("j", "later", "gw", KeyMark::kDeleted, 0, "", kNow));
  List({"later", "other"}, true);
  EXPECT_EQ(WorkerClaims(), std::vector<std::string>{"other"});
  JobCounters k = Counters();
  EXPECT_EQ(k.listed, 3);
  EXPECT_EQ(k.skipped, 2);
  EXPECT_EQ(k.transferred, 0);
  ExpectBalanced();
  auto marks = store_->KeyMarks("j", {"pending", "later", "other"});
  ASSERT_TRUE(marks.ok());
  EXPECT_EQ(marks->size(), 2u);
  EXPECT_EQ(marks->at("pending"), KeyMark::kWritten);
  EXPECT_EQ(marks->at("later"), KeyMark::kDeleted);
}

// The gateway dies mid-copy: its lease ends and the bulk copy takes the
// key; a restarted gateway may take it over first.
TEST_F(GatewayMarksTest, AnExpiredGatewayLeaseGoesBackToTheBulkCopy) {
  ASSERT_EQ(store_->ClaimKey("j", "x", "gw1", kNow, kLease, true)->kind, KeyClaim::Kind::kClaimed);
  List({"x"});
  EXPECT_TRUE(WorkerClaims().empty());
  EXPECT_EQ(store_->ClaimKey("j", "x", "gw2", kNow, kLease, true)->kind, KeyClaim::Kind::kBusy);
  auto taken = store_->ClaimKey("j", "x", "gw2", kLease + 1, kLease + 60'000, true);
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ(taken->kind, KeyClaim::Kind::kClaimed);
  EXPECT_TRUE(taken->from_row);
  EXPECT_FALSE(*store_->MarkKey("j", "x", "gw1", KeyMark::kCopied, 10, "e", kLease + 2))
      << "the old owner lost it";
  // gw2 gives up (a source outage): a worker takes the row.
  ASSERT_TRUE(store_->ReleaseKey("j", "x", "gw2").ok());
  EXPECT_EQ(WorkerClaims(kLease + 3), std::vector<std::string>{"x"});
  ASSERT_TRUE(store_->Finish("j", "worker", {{"x", Outcome::kTransferred, 10}}).ok());
  JobCounters k = Counters();
  EXPECT_EQ(k.listed, 1);
  EXPECT_EQ(k.transferred, 1);
  ExpectBalanced();
}

TEST_F(GatewayMarksTest, AReleasedUnlistedClaimLeavesNothingBehind) {
  ASSERT_EQ(store_->ClaimKey("j", "x", "gw", kNow, kLease, true)->kind, KeyClaim::Kind::kClaimed);
  ASSERT_TRUE(store_->ReleaseKey("j", "x", "gw").ok());
  auto rows = store_->CountRows("j");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows, 0);
  List({"x"});
  EXPECT_EQ(WorkerClaims(), std::vector<std::string>{"x"});
  EXPECT_EQ(store_->MarkKey("j", "x", "gw", KeyMark::kClaimed, 0, "", kNow).status().code(),
            ErrorCode::kInvalidArgument);
}

// Claims and copies leave with the archived job; a client's writes and
// deletes stay, so what runs on the job later (--delete, verify --fix,
// dlq --retry, a gateway after a failed job) still leaves them alone.
TEST_F(GatewayMarksTest, AClientsMarksOutliveTheArchivedJob) {
  for (const char* key : {"copied", "deleted", "written", "claimed"}) {
    ASSERT_TRUE(store_->ClaimKey("j", key, "gw", kNow, kLease, true).ok());
  }
  ASSERT_TRUE(*store_->MarkKey("j", "copied", "gw", KeyMark::kCopied, 10, "e", kNow));
  ASSERT_TRUE(*store_->MarkKey("j", "deleted", "gw", KeyMark::kDeleted, 0, "", kNow));
  ASSERT_TRUE(*store_->MarkKey("j", "written", "gw", KeyMark::kWritten, 5, "w", kNow));
  List({}, true);
  ASSERT_TRUE(store_->SetJobState("j", JobState::kCompleted, kNow, 0, true).ok());
  ASSERT_TRUE(store_->ArchiveJob("j", kNow).ok());
  auto rows = store_->CountRows("j");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows, 2);
  auto marks = store_->KeyMarks("j", {"copied", "deleted", "written", "claimed"});
  ASSERT_TRUE(marks.ok());
  EXPECT_EQ(*marks, (std::map<std::string, KeyMark>{{"deleted", KeyMark::kDeleted},
                                                    {"written", KeyMark::kWritten}}));
  EXPECT_EQ(store_->ClaimKey("j", "x", "gw", kNow, kLease, true).status().code(),
            ErrorCode::kNotFound);
}

// After the job (here archived), a client's write or delete is recorded
// all the same, and counts nothing.
TEST_F(GatewayMarksTest, AWriteAfterTheJobIsRecorded) {
  List({"a"}, true);
  ASSERT_EQ(WorkerClaims().size(), 1u);
  ASSERT_TRUE(store_->Finish("j", "worker", {{"a", Outcome::kTransferred, 10}}).ok());
  ASSERT_TRUE(store_->SetJobState("j", JobState::kCompleted, kNow, 0, true).ok());
  ASSERT_TRUE(store_->ArchiveJob("j", kNow).ok());
  ASSERT_TRUE(store_->RecordKey("j", "a", KeyMark::kDeleted, kNow).ok());
  ASSERT_TRUE(store_->RecordKey("j", "new", KeyMark::kWritten, kNow).ok());
  ASSERT_TRUE(store_->RecordKey("j", "a", KeyMark::kWritten, kNow + 1).ok());  // the last one wins
  EXPECT_EQ(store_->RecordKey("j", "x", KeyMark::kCopied, kNow).code(),
            ErrorCode::kInvalidArgument);
  auto marks = store_->KeyMarks("j", {"a", "new", "x"});
  ASSERT_TRUE(marks.ok());
  EXPECT_EQ(*marks, (std::map<std::string, KeyMark>{{"a", KeyMark::kWritten},
                                                    {"new", KeyMark::kWritten}}));
  auto archived = store_->ListArchivedJobs();
  ASSERT_TRUE(archived.ok());
  ASSERT_EQ(archived->size(), 1u);
  EXPECT_EQ(archived->front().counters.transferred, 1);
  EXPECT_EQ(archived->front().counters.skipped, 0);
}

// verify --fix requeues what differs from the source, except what a client
// wrote or deleted through the gateway (it differs on purpose).
TEST_F(GatewayMarksTest, RequeueKeysLeavesAClientsKeysAlone) {
  List({"a", "b"}, true);
  ASSERT_EQ(WorkerClaims().size(), 2u);
  ASSERT_TRUE(store_->Finish("j", "worker", {{"a", Outcome::kTransferred, 10},
                                             {"b", Outcome::kTransferred, 10}})
                  .ok());
  ASSERT_EQ(store_->ClaimKey("j", "a", "gw", kNow, kLease, true)->kind, KeyClaim::Kind::kClaimed);
  ASSERT_TRUE(*store_->MarkKey("j", "a", "gw", KeyMark::kWritten, 5, "w", kNow));
  auto added = store_->RequeueKeys("j", {{"a", 10, "e-a", 1}, {"b", 10, "e-b", 1}});
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(*added, 1);
  EXPECT_EQ(WorkerClaims(), std::vector<std::string>{"b"});
  ExpectBalanced();
}

// dlq --retry: a dead-lettered key a client has written since is the
// client's: out of the queue, counted skipped, never copied over.
TEST_F(GatewayMarksTest, ADeadLetterAClientWroteSinceIsNotRetried) {
  List({"dead", "other"}, true);
  ASSERT_EQ(WorkerClaims().size(), 2u);
  for (const char* key : {"dead", "other"}) {
    DeadLetter d;
    d.key = key;
    d.size = 10;
    d.reason = "source: 403";
    ASSERT_TRUE(*store_->DeadLetterObject("j", "worker", d));
  }
  ASSERT_EQ(store_->ClaimKey("j", "dead", "gw", kNow, kLease, true)->kind,
            KeyClaim::Kind::kClaimed);
  ASSERT_TRUE(*store_->MarkKey("j", "dead", "gw", KeyMark::kWritten, 5, "w", kNow));
  auto n = store_->RequeueDeadLetters("j");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(WorkerClaims(), std::vector<std::string>{"other"});
  JobCounters k = Counters();
  EXPECT_EQ(k.failed, 0);
  EXPECT_EQ(k.skipped, 1);
  ExpectBalanced();
}

// A copy whose claim lapsed never lands its mark over a client's write, and
// renewed claims do not lapse.
TEST_F(GatewayMarksTest, ACopyNeverReplacesAWriteAndRenewedClaimsHold) {
  ASSERT_EQ(store_->ClaimKey("j", "k", "gw", kNow, kLease, true)->kind, KeyClaim::Kind::kClaimed);
  ASSERT_TRUE(*store_->MarkKey("j", "k", "gw", KeyMark::kWritten, 3, "w", kNow));
  EXPECT_FALSE(*store_->MarkKey("j", "k", "gw", KeyMark::kCopied, 10, "e", kNow));
  auto marks = store_->KeyMarks("j", {"k"});
  ASSERT_TRUE(marks.ok());
  EXPECT_EQ(marks->at("k"), KeyMark::kWritten);
  // A claim renewed past its first lease is still the owner's.
  ASSERT_EQ(store_->ClaimKey("j", "r", "gw", kNow, kLease, true)->kind, KeyClaim::Kind::kClaimed);
  ASSERT_TRUE(store_->RenewLeases("j", "gw", kLease + 60'000).ok());
  EXPECT_EQ(store_->ClaimKey("j", "r", "other", kLease + 1, kLease + 2, true)->kind,
            KeyClaim::Kind::kBusy);
}

// A fallback to a flat listing starts the counters over: marked keys are
// counted again when the relisting meets them.
TEST_F(GatewayMarksTest, MarkedKeysAreCountedAgainAfterAFallBack) {
  ASSERT_TRUE(store_->ClaimKey("j", "a", "gw", kNow, kLease, true).ok());
  ASSERT_TRUE(*store_->MarkKey("j", "a", "gw", KeyMark::kCopied, 4, "e", kNow));
  List({"a", "b"});
  ASSERT_TRUE(store_->Finish("j", "worker", {}).ok());
  EXPECT_EQ(WorkerClaims(), std::vector<std::string>{"b"});
  ASSERT_TRUE(store_->Finish("j", "worker", {{"b", Outcome::kTransferred, 10}}).ok());
  auto flat = store_->FallBackToFlatListing("j", "", "", "");
  ASSERT_TRUE(flat.ok()) << flat.status().ToString();
  ListPageCommit page;
  page.shard = flat->shard;
  page.seq = 1;
  page.done = true;
  page.objects = {{"a", 4, "e", 1}, {"b", 10, "e-b", 1}};
  ASSERT_TRUE(store_->CommitListPage("j", page)->applied);
  JobCounters k = Counters();
  EXPECT_EQ(k.listed, 2);
  EXPECT_EQ(k.transferred, 1) << "a counted again; b relisted as pending";
  ExpectBalanced();
}

// With range shards the store can tell a key not listed yet (no worker can
// have copied it, so the gateway need not look at the destination first).
TEST_F(GatewayMarksTest, ARangeShardTellsWhetherAKeyIsListedYet) {
  ShardRecord low, high;
  low.ranged = high.ranged = true;
  low.upper = "m";
  high.shard = 1;
  high.lower = "m";
  JobRecord job;
  job.id = "r";
  ASSERT_TRUE(store_->CreateJob(job, {low, high}).ok());
  auto unlisted = [&](const std::string& key) {
    auto c = store_->ClaimKey("r", key, "gw", kNow, kLease, false);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c->unlisted;
  };
  EXPECT_TRUE(unlisted("c"));
  EXPECT_TRUE(unlisted("x"));
  ListPageCommit page;
  page.shard = 0;
  page.seq = 1;
  page.upper = "m";
  page.cursor = "d";
  page.next_token = "d";
  page.objects.push_back({"d", 1, "e", 1});
  ASSERT_TRUE(store_->CommitListPage("r", page)->applied);
  EXPECT_FALSE(unlisted("c")) << "listed (and finished, or never there)";
  EXPECT_FALSE(unlisted("d"));
  EXPECT_TRUE(unlisted("e"));
  EXPECT_TRUE(unlisted("x"));
  // The prefix shard of the other jobs here: nothing can be told.
  EXPECT_FALSE(store_->ClaimKey("j", "zzz", "gw", kNow, kLease, false)->unlisted);
}

}  // namespace
}  // namespace ferry::state
