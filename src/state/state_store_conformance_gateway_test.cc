// The StateStore conformance suite (state_store_conformance_test.h): a
// gateway's key marks (state_store.h KeyMark). Each key is copied by one
// party at a time and counted once, whether the gateway or the bulk copy
// meets it first; a key written or deleted through the gateway is never
// enqueued for the bulk copy; and several handles (processes) claiming,
// listing and copying at once never copy a key twice.

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "state/state_store_conformance_test.h"

namespace ferry::state {
namespace {

constexpr int64_t kNow = 1'000'000;
constexpr int64_t kLease = kNow + 60'000;

// Job "j" (one prefix shard) and the helpers the cases share.
class GatewayJob {
 public:
  explicit GatewayJob(StateStore& store) : store_(store) {
    JobRecord job;
    job.id = "j";
    Status st = store_.CreateJob(job, {ShardRecord{}});
    EXPECT_TRUE(st.ok()) << st.ToString();
  }

  // Commits the shard's next page with these keys (size 10 each).
  void List(const std::vector<std::string>& keys, bool done = false) {
    ListPageCommit page;
    page.seq = ++seq_;
    page.done = done;
    page.next_token = done ? "" : "t" + std::to_string(seq_);
    for (const auto& k : keys) page.objects.push_back({k, 10, "e-" + k, 1});
    auto r = store_.CommitListPage("j", page);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(r->applied);
  }

  JobCounters Counters() {
    auto j = store_.GetJob("j");
    EXPECT_TRUE(j.ok());
    return j.ok() ? j->counters : JobCounters{};
  }

  // transferred + skipped + failed + pending = listed, always.
  void ExpectBalanced() {
    JobCounters c = Counters();
    EXPECT_EQ(c.transferred + c.skipped + c.failed + c.pending, c.listed);
  }

  std::vector<std::string> WorkerClaims(int64_t now = kNow) {
    auto rows = store_.Claim("j", "worker", 100, now, now + 60'000);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    std::vector<std::string> keys;
    if (rows.ok()) {
      for (const auto& r : *rows) keys.push_back(r.object.key);
    }
    return keys;
  }

 private:
  StateStore& store_;
  int64_t seq_ = 0;
};

TEST_P(StateStoreConformanceTest,
       GatewayAPendingRowClaimedByTheGatewayIsCountedOnceAndNotGivenToWorkers) {
  StateStore& s = store();
  GatewayJob g(s);
  g.List({"a", "b"});
  auto c = s.ClaimKey("j", "a", "gw", kNow, kLease, false);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->kind, KeyClaim::Kind::kClaimed);
  EXPECT_TRUE(c->from_row);
  EXPECT_EQ(c->object.etag, "e-a");
  EXPECT_EQ(g.WorkerClaims(), std::vector<std::string>{"b"});
  auto m = s.MarkKey("j", "a", "gw", KeyMark::kCopied, 10, "e-a", kNow);
  ASSERT_TRUE(m.ok() && *m);
  JobCounters k = g.Counters();
  EXPECT_EQ(k.listed, 2);
  EXPECT_EQ(k.transferred, 1);
  EXPECT_EQ(k.bytes, 10);
  EXPECT_EQ(k.pending, 1);
  g.ExpectBalanced();
  // Listed again (a relisting shard would): not enqueued, not counted again.
  g.List({"a"});
  EXPECT_EQ(g.Counters().listed, 2);
  g.ExpectBalanced();
}

TEST_P(StateStoreConformanceTest, GatewayAWorkersLeaseMakesTheGatewayWait) {
  StateStore& s = store();
  GatewayJob g(s);
  g.List({"a"});
  EXPECT_EQ(g.WorkerClaims(), std::vector<std::string>{"a"});
  auto c = s.ClaimKey("j", "a", "gw", kNow, kLease, true);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kind, KeyClaim::Kind::kBusy);
  auto m = s.MarkKey("j", "a", "gw", KeyMark::kWritten, 3, "w", kNow);
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(*m) << "a write must wait for the worker's copy";
  // The worker finishes: the key has no row and no mark any more.
  auto f = s.Finish("j", "worker", {{"a", Outcome::kTransferred, 10}});
  ASSERT_TRUE(f.ok());
  c = s.ClaimKey("j", "a", "gw", kNow, kLease, false);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kind, KeyClaim::Kind::kNone);
}

TEST_P(StateStoreConformanceTest,
       GatewayAKeyCopiedBeforeItIsListedIsCountedWhenListedAndNeverEnqueued) {
  StateStore& s = store();
  GatewayJob g(s);
  auto c = s.ClaimKey("j", "x", "gw", kNow, kLease, true);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kind, KeyClaim::Kind::kClaimed);
  EXPECT_FALSE(c->from_row);
  EXPECT_FALSE(c->listing_done);
  // Listed while the gateway copies: enqueued under the gateway's lease.
  g.List({"x", "y"});
  EXPECT_EQ(g.WorkerClaims(), std::vector<std::string>{"y"});
  auto m = s.MarkKey("j", "x", "gw", KeyMark::kCopied, 10, "e-x", kNow);
  ASSERT_TRUE(m.ok() && *m);
  JobCounters k = g.Counters();
  EXPECT_EQ(k.listed, 2);
  EXPECT_EQ(k.transferred, 1);
  g.ExpectBalanced();
  // A key copied and marked before any listing meets it.
  ASSERT_TRUE(s.ClaimKey("j", "z", "gw", kNow, kLease, true).ok());
  ASSERT_TRUE(*s.MarkKey("j", "z", "gw", KeyMark::kCopied, 7, "e-z", kNow));
  EXPECT_EQ(g.Counters().listed, 2) << "not counted before a listing meets it";
  g.List({"z"}, true);
  k = g.Counters();
  EXPECT_EQ(k.listed, 3);
  EXPECT_EQ(k.transferred, 2);
  EXPECT_EQ(k.bytes, 17);
  EXPECT_TRUE(g.WorkerClaims(kNow + 1).empty());
  g.ExpectBalanced();
  auto again = s.ClaimKey("j", "z", "gw", kNow, kLease, true);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->kind, KeyClaim::Kind::kRecorded);
  EXPECT_EQ(again->mark, KeyMark::kCopied);
  EXPECT_EQ(again->etag, "e-z");
  EXPECT_TRUE(again->listing_done);
}

TEST_P(StateStoreConformanceTest, GatewayWrittenAndDeletedKeysAreSkippedByTheBulkCopy) {
  StateStore& s = store();
  GatewayJob g(s);
  g.List({"pending"});
  for (const char* key : {"pending", "later"}) {
    ASSERT_EQ(s.ClaimKey("j", key, "gw", kNow, kLease, true)->kind, KeyClaim::Kind::kClaimed);
  }
  ASSERT_TRUE(*s.MarkKey("j", "pending", "gw", KeyMark::kWritten, 5, "w", kNow));
  ASSERT_TRUE(*s.MarkKey("j", "later", "gw", KeyMark::kDeleted, 0, "", kNow));
  g.List({"later", "other"}, true);
  EXPECT_EQ(g.WorkerClaims(), std::vector<std::string>{"other"});
  JobCounters k = g.Counters();
  EXPECT_EQ(k.listed, 3);
  EXPECT_EQ(k.skipped, 2);
  EXPECT_EQ(k.transferred, 0);
  g.ExpectBalanced();
  auto marks = s.KeyMarks("j", {"pending", "later", "other"});
  ASSERT_TRUE(marks.ok());
  EXPECT_EQ(marks->size(), 2u);
  EXPECT_EQ(marks->at("pending"), KeyMark::kWritten);
  EXPECT_EQ(marks->at("later"), KeyMark::kDeleted);
}

// The gateway dies mid-copy: its lease ends and the bulk copy takes the
// key; a restarted gateway may take it over first.
TEST_P(StateStoreConformanceTest, GatewayAnExpiredGatewayLeaseGoesBackToTheBulkCopy) {
  StateStore& s = store();
  GatewayJob g(s);
  ASSERT_EQ(s.ClaimKey("j", "x", "gw1", kNow, kLease, true)->kind, KeyClaim::Kind::kClaimed);
  g.List({"x"});
  EXPECT_TRUE(g.WorkerClaims().empty());
  EXPECT_EQ(s.ClaimKey("j", "x", "gw2", kNow, kLease, true)->kind, KeyClaim::Kind::kBusy);
  auto taken = s.ClaimKey("j", "x", "gw2", kLease + 1, kLease + 60'000, true);
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ(taken->kind, KeyClaim::Kind::kClaimed);
  EXPECT_TRUE(taken->from_row);
  EXPECT_FALSE(*s.MarkKey("j", "x", "gw1", KeyMark::kCopied, 10, "e", kLease + 2))
      << "the old owner lost it";
  // gw2 gives up (a source outage): a worker takes the row.
  ASSERT_TRUE(s.ReleaseKey("j", "x", "gw2").ok());
  EXPECT_EQ(g.WorkerClaims(kLease + 3), std::vector<std::string>{"x"});
  ASSERT_TRUE(s.Finish("j", "worker", {{"x", Outcome::kTransferred, 10}}).ok());
  JobCounters k = g.Counters();
  EXPECT_EQ(k.listed, 1);
  EXPECT_EQ(k.transferred, 1);
  g.ExpectBalanced();
}

TEST_P(StateStoreConformanceTest, GatewayAReleasedUnlistedClaimLeavesNothingBehind) {
  StateStore& s = store();
  GatewayJob g(s);
  ASSERT_EQ(s.ClaimKey("j", "x", "gw", kNow, kLease, true)->kind, KeyClaim::Kind::kClaimed);
  ASSERT_TRUE(s.ReleaseKey("j", "x", "gw").ok());
  auto rows = s.CountRows("j");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows, 0);
  g.List({"x"});
  EXPECT_EQ(g.WorkerClaims(), std::vector<std::string>{"x"});
  EXPECT_EQ(s.MarkKey("j", "x", "gw", KeyMark::kClaimed, 0, "", kNow).status().code(),
            ErrorCode::kInvalidArgument);
}

// Claims and copies leave with the archived job; a client's writes and
// deletes stay, so what runs on the job later (--delete, verify --fix,
// dlq --retry, a gateway after a failed job) still leaves them alone.
TEST_P(StateStoreConformanceTest, GatewayAClientsMarksOutliveTheArchivedJob) {
  StateStore& s = store();
  GatewayJob g(s);
  for (const char* key : {"copied", "deleted", "written", "claimed"}) {
    ASSERT_TRUE(s.ClaimKey("j", key, "gw", kNow, kLease, true).ok());
  }
  ASSERT_TRUE(*s.MarkKey("j", "copied", "gw", KeyMark::kCopied, 10, "e", kNow));
  ASSERT_TRUE(*s.MarkKey("j", "deleted", "gw", KeyMark::kDeleted, 0, "", kNow));
  ASSERT_TRUE(*s.MarkKey("j", "written", "gw", KeyMark::kWritten, 5, "w", kNow));
  g.List({}, true);
  ASSERT_TRUE(s.SetJobState("j", JobState::kCompleted, kNow, 0, true).ok());
  ASSERT_TRUE(s.ArchiveJob("j", kNow).ok());
  auto rows = s.CountRows("j");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows, 2);
  auto marks = s.KeyMarks("j", {"copied", "deleted", "written", "claimed"});
  ASSERT_TRUE(marks.ok());
  EXPECT_EQ(*marks, (std::map<std::string, KeyMark>{{"deleted", KeyMark::kDeleted},
                                                    {"written", KeyMark::kWritten}}));
  EXPECT_EQ(s.ClaimKey("j", "x", "gw", kNow, kLease, true).status().code(), ErrorCode::kNotFound);
}

// After the job (here archived), a client's write or delete is recorded
// all the same, and counts nothing.
TEST_P(StateStoreConformanceTest, GatewayAWriteAfterTheJobIsRecorded) {
  StateStore& s = store();
  GatewayJob g(s);
  g.List({"a"}, true);
  ASSERT_EQ(g.WorkerClaims().size(), 1u);
  ASSERT_TRUE(s.Finish("j", "worker", {{"a", Outcome::kTransferred, 10}}).ok());
  ASSERT_TRUE(s.SetJobState("j", JobState::kCompleted, kNow, 0, true).ok());
  ASSERT_TRUE(s.ArchiveJob("j", kNow).ok());
  ASSERT_TRUE(s.RecordKey("j", "a", KeyMark::kDeleted, kNow).ok());
  ASSERT_TRUE(s.RecordKey("j", "new", KeyMark::kWritten, kNow).ok());
  ASSERT_TRUE(s.RecordKey("j", "a", KeyMark::kWritten, kNow + 1).ok());  // the last one wins
  EXPECT_EQ(s.RecordKey("j", "x", KeyMark::kCopied, kNow).code(), ErrorCode::kInvalidArgument);
  auto marks = s.KeyMarks("j", {"a", "new", "x"});
  ASSERT_TRUE(marks.ok());
  EXPECT_EQ(*marks,
            (std::map<std::string, KeyMark>{{"a", KeyMark::kWritten}, {"new", KeyMark::kWritten}}));
  auto archived = s.ListArchivedJobs();
  ASSERT_TRUE(archived.ok());
  ASSERT_EQ(archived->size(), 1u);
  EXPECT_EQ(archived->front().counters.transferred, 1);
  EXPECT_EQ(archived->front().counters.skipped, 0);
}

// verify --fix requeues what differs from the source, except what a client
// wrote or deleted through the gateway (it differs on purpose).
TEST_P(StateStoreConformanceTest, GatewayRequeueKeysLeavesAClientsKeysAlone) {
  StateStore& s = store();
  GatewayJob g(s);
  g.List({"a", "b"}, true);
  ASSERT_EQ(g.WorkerClaims().size(), 2u);
  ASSERT_TRUE(
      s.Finish("j", "worker", {{"a", Outcome::kTransferred, 10}, {"b", Outcome::kTransferred, 10}})
          .ok());
  ASSERT_EQ(s.ClaimKey("j", "a", "gw", kNow, kLease, true)->kind, KeyClaim::Kind::kClaimed);
  ASSERT_TRUE(*s.MarkKey("j", "a", "gw", KeyMark::kWritten, 5, "w", kNow));
  auto added = s.RequeueKeys("j", {{"a", 10, "e-a", 1}, {"b", 10, "e-b", 1}});
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(*added, 1);
  EXPECT_EQ(g.WorkerClaims(), std::vector<std::string>{"b"});
  g.ExpectBalanced();
}

// dlq --retry: a dead-lettered key a client has written since is the
// client's: out of the queue, counted skipped, never copied over.
TEST_P(StateStoreConformanceTest, GatewayADeadLetterAClientWroteSinceIsNotRetried) {
  StateStore& s = store();
  GatewayJob g(s);
  g.List({"dead", "other"}, true);
  ASSERT_EQ(g.WorkerClaims().size(), 2u);
  for (const char* key : {"dead", "other"}) {
    DeadLetter d;
    d.key = key;
    d.size = 10;
    d.reason = "source: 403";
    ASSERT_TRUE(*s.DeadLetterObject("j", "worker", d));
  }
  ASSERT_EQ(s.ClaimKey("j", "dead", "gw", kNow, kLease, true)->kind, KeyClaim::Kind::kClaimed);
  ASSERT_TRUE(*s.MarkKey("j", "dead", "gw", KeyMark::kWritten, 5, "w", kNow));
  auto n = s.RequeueDeadLetters("j");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(g.WorkerClaims(), std::vector<std::string>{"other"});
  JobCounters k = g.Counters();
  EXPECT_EQ(k.failed, 0);
  EXPECT_EQ(k.skipped, 1);
  g.ExpectBalanced();
}

// A copy whose claim lapsed never lands its mark over a client's write, and
// renewed claims do not lapse.
TEST_P(StateStoreConformanceTest, GatewayACopyNeverReplacesAWriteAndRenewedClaimsHold) {
  StateStore& s = store();
  GatewayJob g(s);
  ASSERT_EQ(s.ClaimKey("j", "k", "gw", kNow, kLease, true)->kind, KeyClaim::Kind::kClaimed);
  ASSERT_TRUE(*s.MarkKey("j", "k", "gw", KeyMark::kWritten, 3, "w", kNow));
  EXPECT_FALSE(*s.MarkKey("j", "k", "gw", KeyMark::kCopied, 10, "e", kNow));
  auto marks = s.KeyMarks("j", {"k"});
  ASSERT_TRUE(marks.ok());
  EXPECT_EQ(marks->at("k"), KeyMark::kWritten);
  // A claim renewed past its first lease is still the owner's.
  ASSERT_EQ(s.ClaimKey("j", "r", "gw", kNow, kLease, true)->kind, KeyClaim::Kind::kClaimed);
  ASSERT_TRUE(s.RenewLeases("j", "gw", kLease + 60'000).ok());
  EXPECT_EQ(s.ClaimKey("j", "r", "other", kLease + 1, kLease + 2, true)->kind,
            KeyClaim::Kind::kBusy);
}

// A fallback to a flat listing starts the counters over: marked keys are
// counted again when the relisting meets them.
TEST_P(StateStoreConformanceTest, GatewayMarkedKeysAreCountedAgainAfterAFallBack) {
  StateStore& s = store();
  GatewayJob g(s);
  ASSERT_TRUE(s.ClaimKey("j", "a", "gw", kNow, kLease, true).ok());
  ASSERT_TRUE(*s.MarkKey("j", "a", "gw", KeyMark::kCopied, 4, "e", kNow));
  g.List({"a", "b"});
  ASSERT_TRUE(s.Finish("j", "worker", {}).ok());
  EXPECT_EQ(g.WorkerClaims(), std::vector<std::string>{"b"});
  ASSERT_TRUE(s.Finish("j", "worker", {{"b", Outcome::kTransferred, 10}}).ok());
  auto flat = s.FallBackToFlatListing("j", "", "", "");
  ASSERT_TRUE(flat.ok()) << flat.status().ToString();
  ListPageCommit page;
  page.shard = flat->shard;
  page.seq = 1;
  page.done = true;
  page.objects = {{"a", 4, "e", 1}, {"b", 10, "e-b", 1}};
  ASSERT_TRUE(s.CommitListPage("j", page)->applied);
  JobCounters k = g.Counters();
  EXPECT_EQ(k.listed, 2);
  EXPECT_EQ(k.transferred, 1) << "a counted again; b relisted as pending";
  g.ExpectBalanced();
}

// The destination of the race below: copies made of each key.
class Destination {
 public:
  void Copy(const std::string& key) {
    std::lock_guard lock(mu_);
    ++copies_[key];
  }
  bool Has(const std::string& key) {
    std::lock_guard lock(mu_);
    return copies_.count(key) != 0;
  }
  std::map<std::string, int> copies() {
    std::lock_guard lock(mu_);
    return copies_;
  }

 private:
  std::mutex mu_;
  std::map<std::string, int> copies_;
};

// Commits `keys` to job "j"'s shard 0 in pages of `page`.
void ListInPages(StateStore& lister, const std::vector<std::string>& keys, size_t page_size) {
  for (size_t first = 0; first < keys.size(); first += page_size) {
    ListPageCommit page;
    page.seq = static_cast<int64_t>(first / page_size) + 1;
    page.done = first + page_size >= keys.size();
    page.next_token = page.done ? "" : "t" + std::to_string(page.seq);
    for (size_t i = first; i < std::min(keys.size(), first + page_size); ++i) {
      page.objects.push_back({keys[i], 10, "e", 1});
    }
    auto r = lister.CommitListPage("j", page);
    EXPECT_TRUE(r.ok() && r->applied) << r.status().ToString();
  }
}

// What the gateway does for a client's GET of each key (gateway_read.cc
// Find and Answer): a key neither pending nor marked is looked for at the
// destination, claimed when absent, and looked for once more under the
// claim unless it was provably unlisted; a claimed key is copied and
// marked.
void GatewayReads(StateStore& gateway, const std::vector<std::string>& order, Destination& dst) {
  for (const std::string& key : order) {
    auto c = gateway.ClaimKey("j", key, "gw", kNow, kLease, false);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    if (c->kind == KeyClaim::Kind::kNone && !c->listing_done) {
      if (dst.Has(key)) continue;  // copied already
      c = gateway.ClaimKey("j", key, "gw", kNow, kLease, true);
      ASSERT_TRUE(c.ok()) << c.status().ToString();
    }
    if (c->kind != KeyClaim::Kind::kClaimed) continue;
    if (!c->from_row && !c->unlisted && dst.Has(key)) {
      ASSERT_TRUE(gateway.ReleaseKey("j", key, "gw").ok());
      continue;
    }
    dst.Copy(key);
    auto m = gateway.MarkKey("j", key, "gw", KeyMark::kCopied, 10, "e", kNow);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_TRUE(*m) << key;
  }
}

// A worker: claims, copies (the destination first, as a worker writes
// before it records), finishes; until nothing is left once `last` is set.
void WorkerCopies(StateStore& worker, Destination& dst, const std::atomic<bool>& last) {
  for (;;) {
    const bool was_last = last;
    auto rows = worker.Claim("j", "worker", 20, kNow, kLease);
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    std::vector<FinishedObject> done;
    for (const ClaimedObject& r : *rows) {
      dst.Copy(r.object.key);
      done.push_back({r.object.key, Outcome::kTransferred, 10});
    }
    if (!done.empty()) ASSERT_TRUE(worker.Finish("j", "worker", done).ok());
    if (rows->empty() && was_last) return;
    if (rows->empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Three handles on one database, as three processes: one lists 1,000 keys
// in pages of 10, one is a gateway copying them on demand near the
// listing's front (where its claims and the pages meet), one is a worker
// copying what it claims. Whoever meets a key first copies it; nobody
// copies a key twice; the counters end exact.
TEST_P(StateStoreConformanceTest, GatewayListingGatewayAndWorkerAtOnceCopyEachKeyOnce) {
  GatewayJob g(store());
  std::unique_ptr<StateStore> lister = OpenAnother(), gateway = OpenAnother(),
                              worker = OpenAnother();
  ASSERT_TRUE(lister && gateway && worker);
  constexpr int kKeys = 1000;
  const std::vector<std::string> keys = NumberedKeys(kKeys);
  std::vector<std::string> order = keys;
  for (size_t i = 0; i + 1 < order.size(); i += 2) std::swap(order[i], order[i + 1]);
  Destination dst;
  std::atomic<bool> last{false};
  std::thread list_thread([&] { ListInPages(*lister, keys, 10); });
  std::thread gateway_thread([&] { GatewayReads(*gateway, order, dst); });
  std::thread worker_thread([&] { WorkerCopies(*worker, dst, last); });
  list_thread.join();
  gateway_thread.join();
  last = true;
  worker_thread.join();
  const std::map<std::string, int> copies = dst.copies();
  EXPECT_EQ(copies.size(), static_cast<size_t>(kKeys));
  for (const auto& [key, n] : copies) EXPECT_EQ(n, 1) << key << " copied " << n << " times";
  JobCounters c = g.Counters();
  EXPECT_EQ(c.listed, kKeys);
  EXPECT_EQ(c.transferred, kKeys);
  EXPECT_EQ(c.bytes, 10 * kKeys);
  EXPECT_EQ(c.pending, 0);
  g.ExpectBalanced();
}

// With range shards the store can tell a key not listed yet (no worker can
// have copied it, so the gateway need not look at the destination first).
TEST_P(StateStoreConformanceTest, GatewayARangeShardTellsWhetherAKeyIsListedYet) {
  StateStore& s = store();
  GatewayJob g(s);
  ShardRecord low, high;
  low.ranged = high.ranged = true;
  low.upper = "m";
  high.shard = 1;
  high.lower = "m";
  JobRecord job;
  job.id = "r";
  ASSERT_TRUE(s.CreateJob(job, {low, high}).ok());
  auto unlisted = [&](const std::string& key) {
    auto c = s.ClaimKey("r", key, "gw", kNow, kLease, false);
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
  ASSERT_TRUE(s.CommitListPage("r", page)->applied);
  EXPECT_FALSE(unlisted("c")) << "listed (and finished, or never there)";
  EXPECT_FALSE(unlisted("d"));
  EXPECT_TRUE(unlisted("e"));
  EXPECT_TRUE(unlisted("x"));
  // The prefix shard of the other jobs here: nothing can be told.
  EXPECT_FALSE(s.ClaimKey("j", "zzz", "gw", kNow, kLease, false)->unlisted);
}

}  // namespace
}  // namespace ferry::state
