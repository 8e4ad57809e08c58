// StateStore conformance cases for object rows: claims and leases, outcomes
// (finish, retry, release, dead letters), multipart progress, a randomised
// check of the counters against a model, and a throughput smoke test.

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "state/state_store_conformance_test.h"

namespace ferry::state {
namespace {

using Keys = std::vector<std::string>;

TEST_P(StateStoreConformanceTest, ClaimTakesUpToMaxInKeyOrder) {
  MakeJob("j");
  Enqueue("j", {"e", "b", "h", "a", "j", "c", "g", "d", "i", "f"});
  auto first = store().Claim("j", "o1", 3, 10, 1000);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->size(), 3u);
  const char* want[] = {"a", "b", "c"};
  for (size_t i = 0; i < 3; ++i) {
    const ClaimedObject& c = (*first)[i];
    EXPECT_EQ(c.object.key, want[i]);
    EXPECT_EQ(c.object.size, 1u);
    EXPECT_EQ(c.object.etag, std::string("etag-") + want[i]);
    EXPECT_EQ(c.object.last_modified_ms, 7);
    EXPECT_EQ(c.claims, 1);
    EXPECT_EQ(c.attempts, 0);
    EXPECT_EQ(c.last_error, "");
  }
  EXPECT_EQ(ClaimKeys("j", "o2", 100, 10), (Keys{"d", "e", "f", "g", "h", "i", "j"}));
  EXPECT_EQ(ClaimKeys("j", "o3", 100, 10), Keys{});
  EXPECT_EQ(ClaimKeys("j", "o3", 0, 10), Keys{});
  EXPECT_EQ(Job("j").counters.pending, 10);  // claimed rows are still pending
}

TEST_P(StateStoreConformanceTest, AnExpiredLeaseIsClaimableAndTheOldOwnerLosesTheRow) {
  MakeJob("j");
  Enqueue("j", {"a"});
  EXPECT_EQ(ClaimKeys("j", "o1", 10, 100, 200), Keys{"a"});
  const struct {
    int64_t now_ms;
    bool claimable;
  } cases[] = {{100, false}, {150, false}, {199, false}, {200, true}};
  for (const auto& c : cases) {
    auto got = store().Claim("j", "o2", 10, c.now_ms, c.now_ms + 1000);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->size(), c.claimable ? 1u : 0u) << "at " << c.now_ms;
    if (!got->empty()) {
      EXPECT_EQ(got->front().claims, 2);
    }
  }
  EXPECT_EQ(FinishKeys("j", "o1", {"a"}), 0);  // taken by o2
  EXPECT_EQ(FinishKeys("j", "o2", {"a"}), 1);
  ExpectBalanced("j");
}

TEST_P(StateStoreConformanceTest, RetryWaitsForNotBeforeAndCountsAttempts) {
  MakeJob("j");
  Enqueue("j", {"a", "b"});
  ASSERT_EQ(ClaimKeys("j", "o1", 10, 0).size(), 2u);
  EXPECT_FALSE(*store().Retry("j", "o2", "a", "not mine", 0));  // not the owner
  EXPECT_TRUE(*store().Retry("j", "o1", "a", "boom", 500));
  EXPECT_FALSE(*store().Retry("j", "o1", "a", "again", 500));  // no longer owned
  EXPECT_EQ(ClaimKeys("j", "o2", 10, 499), Keys{});
  auto got = store().Claim("j", "o2", 10, 500, 10000);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ(got->front().object.key, "a");
  EXPECT_EQ(got->front().attempts, 1);
  EXPECT_EQ(got->front().claims, 2);
  EXPECT_EQ(got->front().last_error, "boom");

  // Release gives the row back without an attempt.
  EXPECT_FALSE(*store().Release("j", "o2", "b", 0));
  EXPECT_TRUE(*store().Release("j", "o1", "b", 600));
  EXPECT_FALSE(*store().Release("j", "o1", "b", 600));
  EXPECT_EQ(ClaimKeys("j", "o3", 10, 599), Keys{});
  got = store().Claim("j", "o3", 10, 600, 10000);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ(got->front().object.key, "b");
  EXPECT_EQ(got->front().attempts, 0);
  EXPECT_EQ(got->front().claims, 2);
  JobCounters c = Job("j").counters;
  EXPECT_EQ(c.pending, 2);
  EXPECT_EQ(c.failed, 0);
  ExpectBalanced("j");
}

TEST_P(StateStoreConformanceTest, FinishCountsEachKeyOnceForItsOwner) {
  MakeJob("j");
  Enqueue("j", {"a", "bb", "ccc", "d"});
  ASSERT_EQ(ClaimKeys("j", "o1", 3, 0).size(), 3u);  // a, bb, ccc

  auto r = store().Finish("j", "o2", {{"a", Outcome::kTransferred, 1}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, std::vector<bool>{false});  // not the owner
  EXPECT_EQ(Job("j").counters.transferred, 0);

  r = store().Finish("j", "o1",
                     {{"a", Outcome::kTransferred, 10},
                      {"bb", Outcome::kSkipped, 2},
                      {"a", Outcome::kTransferred, 10},    // duplicate in the batch
                      {"d", Outcome::kTransferred, 1},     // never claimed
                      {"zz", Outcome::kTransferred, 1}});  // no such key
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (std::vector<bool>{true, true, false, false, false}));
  JobCounters c = Job("j").counters;
  EXPECT_EQ(c.transferred, 1);
  EXPECT_EQ(c.skipped, 1);
  EXPECT_EQ(c.bytes, 10);  // skipped bytes are not counted
  EXPECT_EQ(c.pending, 2);

  // A duplicate delivery changes nothing.
  r = store().Finish("j", "o1", {{"a", Outcome::kTransferred, 10}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, std::vector<bool>{false});
  EXPECT_EQ(Job("j").counters.transferred, 1);
  EXPECT_EQ(Job("j").counters.bytes, 10);
  r = store().Finish("j", "o1", {});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
  ExpectBalanced("j");
}

TEST_P(StateStoreConformanceTest, DeadLettersAreListedAndRequeued) {
  MakeJob("j");
  Enqueue("j", {"a", "bb", "ccc"});
  ASSERT_EQ(ClaimKeys("j", "o1", 10, 0).size(), 3u);
  DeadLetter a{"a", 0, "access denied", 3, "403 AccessDenied", 77};
  EXPECT_FALSE(*store().DeadLetterObject("j", "o2", a));  // not the owner
  EXPECT_TRUE(*store().DeadLetterObject("j", "o1", a));
  EXPECT_FALSE(*store().DeadLetterObject("j", "o1", a));  // already moved
  DeadLetter c{"ccc", 0, "retries exhausted", 5, "503 SlowDown", 88};
  EXPECT_TRUE(*store().DeadLetterObject("j", "o1", c));
  EXPECT_EQ(FinishKeys("j", "o1", {"bb"}), 1);

  JobCounters n = Job("j").counters;
  EXPECT_EQ(n.listed, 3);
  EXPECT_EQ(n.failed, 2);
  EXPECT_EQ(n.transferred, 1);
  EXPECT_EQ(n.pending, 0);
  ExpectBalanced("j");

  auto dlq = store().ListDeadLetters("j");
  ASSERT_TRUE(dlq.ok()) << dlq.status().ToString();
  ASSERT_EQ(dlq->size(), 2u);
  const DeadLetter& d0 = (*dlq)[0];
  EXPECT_EQ(d0.key, "a");
  EXPECT_EQ(d0.size, 1u);  // the listed size
  EXPECT_EQ(d0.reason, "access denied");
  EXPECT_EQ(d0.attempts, 3);
  EXPECT_EQ(d0.last_error, "403 AccessDenied");
  EXPECT_EQ(d0.at_ms, 77);
  EXPECT_EQ((*dlq)[1].key, "ccc");
  EXPECT_EQ((*dlq)[1].size, 3u);
  EXPECT_EQ((*dlq)[1].reason, "retries exhausted");

  auto requeued = store().RequeueDeadLetters("j");
  ASSERT_TRUE(requeued.ok()) << requeued.status().ToString();
  EXPECT_EQ(*requeued, 2);
  n = Job("j").counters;
  EXPECT_EQ(n.listed, 3);
  EXPECT_EQ(n.failed, 0);
  EXPECT_EQ(n.pending, 2);
  EXPECT_TRUE(store().ListDeadLetters("j")->empty());
  ExpectBalanced("j");
  auto again = store().Claim("j", "o2", 10, 1, 1000);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->size(), 2u);
  EXPECT_EQ(again->front().object.key, "a");
  EXPECT_EQ(again->front().object.etag, "etag-a");
  EXPECT_EQ(again->front().object.size, 1u);
  EXPECT_EQ(again->front().attempts, 0);
  EXPECT_EQ(again->front().claims, 1);
  EXPECT_EQ(*store().RequeueDeadLetters("j"), 0);
}

TEST_P(StateStoreConformanceTest, LeasesAreRenewedAndReleasedPerOwner) {
  MakeJob("j");
  Enqueue("j", NumberedKeys(10));
  ASSERT_EQ(ClaimKeys("j", "o1", 5, 0, 100).size(), 5u);
  ASSERT_EQ(ClaimKeys("j", "o2", 3, 0, 100).size(), 3u);
  ASSERT_TRUE(store().RenewLeases("j", "o1", 1000).ok());
  // At 500 o2's leases have expired, o1's have not; two rows were never claimed.
  EXPECT_EQ(ClaimKeys("j", "o3", 100, 500, 2000),
            (Keys{"k00005", "k00006", "k00007", "k00008", "k00009"}));
  auto released = store().ReleaseOwner("j", "o1");
  ASSERT_TRUE(released.ok());
  EXPECT_EQ(*released, 5);
  EXPECT_EQ(*store().ReleaseOwner("j", "nobody"), 0);
  EXPECT_EQ(ClaimKeys("j", "o4", 100, 500, 2000),
            (Keys{"k00000", "k00001", "k00002", "k00003", "k00004"}));
  EXPECT_EQ(FinishKeys("j", "o1", {"k00000"}), 0);
  EXPECT_EQ(FinishKeys("j", "o4", {"k00000"}), 1);
}

TEST_P(StateStoreConformanceTest, TwoInstancesAndEightThreadsClaimEachRowOnce) {
  constexpr int kRows = 5000;
  MakeJob("j");
  const Keys keys = NumberedKeys(kRows);
  for (int p = 0; p < kRows / 1000; ++p) {
    Enqueue("j", Keys(keys.begin() + p * 1000, keys.begin() + (p + 1) * 1000));
  }
  std::unique_ptr<StateStore> other = OpenAnother();
  ASSERT_NE(other, nullptr);
  std::vector<Keys> claimed(8);
  std::vector<std::string> errors(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      StateStore& s = t < 4 ? store() : *other;
      const std::string owner = "owner-" + std::to_string(t);
      for (;;) {
        auto got = s.Claim("j", owner, 37, 1, 1'000'000);
        if (!got.ok()) {
          errors[t] = got.status().ToString();
          return;
        }
        if (got->empty()) return;
        std::vector<FinishedObject> done;
        for (const ClaimedObject& c : *got) {
          claimed[t].push_back(c.object.key);
          done.push_back({c.object.key, Outcome::kTransferred, 1});
        }
        auto fin = s.Finish("j", owner, done);
        if (!fin.ok() ||
            std::count(fin->begin(), fin->end(), true) != static_cast<long>(done.size())) {
          errors[t] = fin.ok() ? "a finish was not counted" : fin.status().ToString();
          return;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::multiset<std::string> all;
  for (int t = 0; t < 8; ++t) {
    EXPECT_EQ(errors[t], "") << "thread " << t;
    all.insert(claimed[t].begin(), claimed[t].end());
  }
  EXPECT_EQ(all.size(), static_cast<size_t>(kRows));
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), static_cast<size_t>(kRows));
  JobCounters c = Job("j").counters;
  EXPECT_EQ(c.transferred, kRows);
  EXPECT_EQ(c.pending, 0);
  EXPECT_EQ(*store().CountRows("j"), 0);
}

TEST_P(StateStoreConformanceTest, FinishingAnObjectForgetsItsUploadAndNoOther) {
  MakeJob("j");
  MakeJob("k");
  Enqueue("j", {"a", "b", "c"});
  Enqueue("k", {"a"});
  ASSERT_TRUE(store().SaveUpload("j", "a", {"ua", "e", 1, {{1, "x", 1}}}).ok());
  ASSERT_TRUE(store().SaveUpload("j", "b", {"ub", "e", 1, {{1, "y", 1}}}).ok());
  ASSERT_TRUE(store().SaveUpload("k", "a", {"uk", "e", 1, {{1, "z", 1}}}).ok());
  ASSERT_EQ(ClaimKeys("j", "o1", 3, 100, 50000).size(), 3u);
  ASSERT_EQ(FinishKeys("j", "o1", {"a", "c"}), 2);
  auto a = store().GetUpload("j", "a");
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->has_value());  // finished: its upload and parts are gone
  auto b = store().GetUpload("j", "b");
  ASSERT_TRUE(b.ok() && b->has_value());  // still in flight
  EXPECT_EQ((*b)->parts.size(), 1u);
  auto other = store().GetUpload("k", "a");  // same key, another job
  ASSERT_TRUE(other.ok() && other->has_value());
  ASSERT_EQ(FinishKeys("j", "o1", {"b"}), 1);
  b = store().GetUpload("j", "b");
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->has_value());
}

TEST_P(StateStoreConformanceTest, UploadsRecordPartsInOrder) {
  MakeJob("j");
  UploadRecord up{"id-1", "src-etag", 5 << 20, {{2, "p2", 5 << 20}, {1, "p1", 5 << 20}}};
  ASSERT_TRUE(store().SaveUpload("j", "big", up).ok());
  ASSERT_TRUE(store().AddPart("j", "big", {3, "p3", 100}).ok());
  ASSERT_TRUE(store().AddPart("j", "big", {2, "p2-again", 5 << 20}).ok());  // replaces
  auto got = store().GetUpload("j", "big");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->upload_id, "id-1");
  EXPECT_EQ((*got)->src_etag, "src-etag");
  EXPECT_EQ((*got)->part_size, 5u << 20);
  ASSERT_EQ((*got)->parts.size(), 3u);
  const struct {
    int number;
    const char* etag;
    uint64_t size;
  } want[] = {{1, "p1", 5 << 20}, {2, "p2-again", 5 << 20}, {3, "p3", 100}};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*got)->parts[i].number, want[i].number);
    EXPECT_EQ((*got)->parts[i].etag, want[i].etag);
    EXPECT_EQ((*got)->parts[i].size, want[i].size);
  }

  ASSERT_TRUE(store().SaveUpload("j", "big", {"id-2", "src-etag-2", 8 << 20, {}}).ok());
  got = store().GetUpload("j", "big");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->upload_id, "id-2");
  EXPECT_TRUE((*got)->parts.empty());  // SaveUpload replaces the parts too

  ASSERT_TRUE(store().SaveUpload("j", "a-first", {"id-0", "e", 1, {{1, "x", 1}}}).ok());
  ASSERT_TRUE(store().AddPart("j", "big", {1, "q1", 8 << 20}).ok());
  auto list = store().ListUploads("j");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].first, "a-first");
  EXPECT_EQ((*list)[0].second.parts.size(), 1u);
  EXPECT_EQ((*list)[1].first, "big");
  ASSERT_EQ((*list)[1].second.parts.size(), 1u);
  EXPECT_EQ((*list)[1].second.parts[0].etag, "q1");

  ASSERT_TRUE(store().DeleteUpload("j", "big").ok());
  got = store().GetUpload("j", "big");
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value());
  EXPECT_FALSE(store().GetUpload("j", "never")->has_value());
  EXPECT_EQ(store().AddPart("j", "never", {1, "x", 1}).code(), ErrorCode::kNotFound);
  EXPECT_EQ(store().ListUploads("j")->size(), 1u);
}

TEST_P(StateStoreConformanceTest, FinishAndDeadLetterRemoveTheKeysRows) {
  MakeJob("j");
  Enqueue("j", {"a", "b", "c"});
  ASSERT_EQ(ClaimKeys("j", "o1", 10, 0).size(), 3u);
  ASSERT_TRUE(store().SaveUpload("j", "a", {"ua", "e", 1, {{1, "x", 1}, {2, "y", 1}}}).ok());
  ASSERT_TRUE(store().SaveUpload("j", "b", {"ub", "e", 1, {{1, "x", 1}}}).ok());
  EXPECT_EQ(*store().CountRows("j"), 3 + 2 + 3);  // objects, uploads, parts
  EXPECT_EQ(FinishKeys("j", "o1", {"a"}), 1);
  EXPECT_FALSE(store().GetUpload("j", "a")->has_value());
  EXPECT_EQ(*store().CountRows("j"), 2 + 1 + 1);
  ASSERT_TRUE(*store().DeadLetterObject("j", "o1", {"b", 0, "r", 1, "e", 1}));
  EXPECT_FALSE(store().GetUpload("j", "b")->has_value());
  EXPECT_EQ(*store().CountRows("j"), 1 + 1);  // c, and b's dead letter
  EXPECT_EQ(*store().RequeueDeadLetters("j"), 1);
  ASSERT_EQ(ClaimKeys("j", "o2", 10, 1).size(), 1u);
  EXPECT_EQ(FinishKeys("j", "o2", {"b"}), 1);
  EXPECT_EQ(FinishKeys("j", "o1", {"c"}), 1);
  EXPECT_EQ(*store().CountRows("j"), 0);
  ExpectBalanced("j");
}

// A model of who holds what in one job, driven by random operations that
// it applies to the store too: every outcome the store reports must match
// the model's, and the counters must agree with it.
class HolderModel {
 public:
  HolderModel(StateStore& store, std::string job) : store_(store), job_(std::move(job)) {}

  // One random operation at a later time, by a random owner.
  void Step(int op);
  // The job's counters and rows against the model.
  void CheckCounters(int op);

 private:
  enum class Where { kPending, kDone, kDead };
  struct Holder {
    std::string owner;
    int64_t until = 0;
  };

  int Pick(int n) { return static_cast<int>(rng_() % static_cast<unsigned>(n)); }
  void ListPage();
  void Claim(const std::string& owner, int op);
  void Renew(const std::string& owner, const std::vector<std::string>& mine);
  void ReleaseOwner(const std::string& owner, const std::vector<std::string>& mine);
  void Conclude(const std::string& owner, std::vector<std::string> candidates, int op);
  void Apply(const std::string& owner, const std::string& key, int kind, bool* acted);
  void RequeueDead();

  StateStore& store_;
  const std::string job_;
  std::mt19937 rng_{20240601};
  std::map<std::string, Where> where_;
  std::map<std::string, Holder> held_;  // pending keys claimed
  std::map<std::string, int64_t> not_before_;
  int64_t now_ = 1, next_key_ = 0, seq_ = 0;
};

void HolderModel::Step(int op) {
  static const std::string kOwners[] = {"o1", "o2", "o3"};
  now_ += 1 + Pick(20);
  const std::string& owner = kOwners[Pick(3)];
  std::vector<std::string> mine;  // keys the model says `owner` holds
  for (const auto& [k, h] : held_) {
    if (h.owner == owner) mine.push_back(k);
  }
  int what = Pick(100);
  if (what < 12) {
    ListPage();
  } else if (what < 40) {
    Claim(owner, op);
  } else if (what < 48 && !mine.empty()) {
    Renew(owner, mine);
  } else if (what < 50) {
    ReleaseOwner(owner, mine);
  } else if (what < 96) {  // an outcome for a key `owner` may or may not hold
    Conclude(owner, mine, op);
  } else {
    RequeueDead();
  }
}

// A list page: new keys, and keys still pending.
void HolderModel::ListPage() {
  ListPageCommit page;
  page.seq = ++seq_;
  std::set<std::string> fresh;
  for (int i = Pick(8); i > 0; --i) {
    std::string k = NumberedKeys(1, "r" + std::to_string(next_key_++))[0];
    page.objects.push_back({k, 3, "e", 0});
    fresh.insert(k);
  }
  for (const auto& [k, w] : where_) {
    if (w == Where::kPending && Pick(20) == 0) page.objects.push_back({k, 3, "e", 0});
  }
  auto r = store_.CommitListPage(job_, page);
  ASSERT_TRUE(r.ok() && r->applied) << r.status().ToString();
  ASSERT_EQ(r->enqueued, static_cast<int64_t>(fresh.size()));
  for (const std::string& k : fresh) where_[k] = Where::kPending;
}

// A claim: the first claimable keys in key order.
void HolderModel::Claim(const std::string& owner, int op) {
  const int max = 1 + Pick(6);
  std::vector<std::string> want;
  for (const auto& [k, w] : where_) {
    auto h = held_.find(k);
    if (w == Where::kPending && (h == held_.end() || h->second.until <= now_) &&
        not_before_[k] <= now_ && static_cast<int>(want.size()) < max) {
      want.push_back(k);
    }
  }
  auto claimed = store_.Claim(job_, owner, max, now_, now_ + 150);
  ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  std::vector<std::string> got;
  for (const ClaimedObject& c : *claimed) got.push_back(c.object.key);
  ASSERT_EQ(got, want) << "op " << op;
  for (const std::string& k : want) held_[k] = {owner, now_ + 150};
}

void HolderModel::Renew(const std::string& owner, const std::vector<std::string>& mine) {
  ASSERT_TRUE(store_.RenewLeases(job_, owner, now_ + 150).ok());
  for (const std::string& k : mine) held_[k].until = now_ + 150;
}

void HolderModel::ReleaseOwner(const std::string& owner, const std::vector<std::string>& mine) {
  auto n = store_.ReleaseOwner(job_, owner);
  ASSERT_TRUE(n.ok());
  ASSERT_EQ(*n, static_cast<int64_t>(mine.size()));
  for (const std::string& k : mine) held_.erase(k);
}

// An outcome for one of `candidates` (the keys `owner` holds) or of a key
// another owner holds: the store acts only for the holder.
void HolderModel::Conclude(const std::string& owner, std::vector<std::string> candidates, int op) {
  for (const auto& [k, h] : held_) {
    if (Pick(10) == 0) candidates.push_back(k);
  }
  if (candidates.empty()) return;
  const std::string key = candidates[Pick(static_cast<int>(candidates.size()))];
  auto it = held_.find(key);
  const bool owns = it != held_.end() && it->second.owner == owner;
  const int kind = Pick(10);
  bool acted = false;
  ASSERT_NO_FATAL_FAILURE(Apply(owner, key, kind, &acted));
  ASSERT_EQ(acted, owns) << "op " << op << " kind " << kind << " key " << key;
  if (acted) held_.erase(key);
}

// Outcome `kind`: 0-5 finish (0-3 transferred, 4-5 skipped), 6-7 retry,
// 8 release, 9 dead letter. `acted`: whether the store applied it.
void HolderModel::Apply(const std::string& owner, const std::string& key, int kind, bool* acted) {
  if (kind < 6) {
    auto r = store_.Finish(job_, owner,
                           {{key, kind < 4 ? Outcome::kTransferred : Outcome::kSkipped, 3}});
    ASSERT_TRUE(r.ok());
    *acted = r->front();
    if (*acted) where_[key] = Where::kDone;
  } else if (kind < 8) {
    const int64_t nb = now_ + Pick(50);
    auto r = store_.Retry(job_, owner, key, "err", nb);
    ASSERT_TRUE(r.ok());
    *acted = *r;
    if (*acted) not_before_[key] = nb;
  } else if (kind < 9) {
    auto r = store_.Release(job_, owner, key, now_);
    ASSERT_TRUE(r.ok());
    *acted = *r;
  } else {
    auto r = store_.DeadLetterObject(job_, owner, {key, 3, "r", 1, "e", now_});
    ASSERT_TRUE(r.ok());
    *acted = *r;
    if (*acted) where_[key] = Where::kDead;
  }
}

void HolderModel::RequeueDead() {
  auto n = store_.RequeueDeadLetters(job_);
  ASSERT_TRUE(n.ok());
  int64_t dead = 0;
  for (auto& [k, w] : where_) {
    if (w == Where::kDead) {
      ++dead;
      w = Where::kPending;
      not_before_[k] = 0;
    }
  }
  ASSERT_EQ(*n, dead);
}

void HolderModel::CheckCounters(int op) {
  auto job = store_.GetJob(job_);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const JobCounters& c = job->counters;
  int64_t pending = 0, done = 0, dead = 0;
  for (const auto& [k, w] : where_) {
    pending += w == Where::kPending;
    done += w == Where::kDone;
    dead += w == Where::kDead;
  }
  ASSERT_EQ(c.listed, static_cast<int64_t>(where_.size())) << "op " << op;
  ASSERT_EQ(c.pending, pending) << "op " << op;
  ASSERT_EQ(c.transferred + c.skipped, done) << "op " << op;
  ASSERT_EQ(c.failed, dead) << "op " << op;
  ASSERT_EQ(*store_.CountRows(job_), pending + dead) << "op " << op;
}

TEST_P(StateStoreConformanceTest, RandomOperationsMatchAModel) {
  MakeJob("j");
  HolderModel model(store(), "j");
  for (int op = 0; op < 3000; ++op) {
    ASSERT_NO_FATAL_FAILURE(model.Step(op));
    if (op % 50 == 0 || op == 2999) {
      ASSERT_NO_FATAL_FAILURE(model.CheckCounters(op));
      ExpectBalanced("j");
    }
  }
  EXPECT_GT(Job("j").counters.transferred, 100);  // the mix did real work
}

// Not a benchmark: a guard that the hot paths stay fast (see the printed time).
TEST_P(StateStoreConformanceTest, TwentyThousandObjectsFlowThroughQuickly) {
  MakeJob("j");
  const auto start = std::chrono::steady_clock::now();
  const Keys keys = NumberedKeys(20000, "some/longer/prefix/object-");
  for (int p = 0; p < 20; ++p) {
    Enqueue("j", Keys(keys.begin() + p * 1000, keys.begin() + (p + 1) * 1000), p == 19);
  }
  const auto listed = std::chrono::steady_clock::now();
  int64_t finished = 0;
  for (;;) {
    Keys batch = ClaimKeys("j", "o1", 256, 1);
    if (batch.empty()) break;
    finished += FinishKeys("j", "o1", batch);
  }
  const auto end = std::chrono::steady_clock::now();
  auto ms = [](auto d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
  std::cout << "[  TIMING  ] " << GetParam().name << ": 20000 objects listed in "
            << ms(listed - start) << " ms, claimed+finished in " << ms(end - listed) << " ms\n";
  EXPECT_EQ(finished, 20000);
  JobRecord j = Job("j");
  EXPECT_TRUE(j.listing_done);
  EXPECT_EQ(j.counters.transferred, 20000);
  EXPECT_EQ(j.counters.pending, 0);
  EXPECT_EQ(*store().CountRows("j"), 0);
}

}  // namespace
}  // namespace ferry::state
