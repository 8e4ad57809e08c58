// The StateStore conformance suite (state_store_conformance_test.h): range
// shards, splits and the fallback to one flat listing.

#include "state/state_store_conformance_test.h"

namespace ferry::state {
namespace {

ShardRecord Ranged(int id, std::string lower, std::string upper) {
  ShardRecord s;
  s.shard = id;
  s.prefix = "p/";
  s.ranged = true;
  s.lower = std::move(lower);
  s.upper = std::move(upper);
  return s;
}

ListPageCommit Page(const ShardRecord& s, std::vector<std::string> keys, bool done) {
  ListPageCommit page;
  page.shard = s.shard;
  page.seq = s.seq + 1;
  page.upper = s.upper;
  page.done = done;
  for (auto& k : keys) page.objects.push_back({k, 1, "e", 7});
  if (!keys.empty()) page.cursor = keys.back();
  return page;
}

ShardRecord Shard(StateStore& store, const std::string& job, int id) {
  auto shards = store.GetShards(job);
  EXPECT_TRUE(shards.ok()) << shards.status().ToString();
  if (shards.ok()) {
    for (const ShardRecord& s : *shards) {
      if (s.shard == id) return s;
    }
  }
  ADD_FAILURE() << "no shard " << id;
  return {};
}

TEST_P(StateStoreConformanceTest, RangeShardsKeepTheirBoundsAndCursor) {
  MakeJob("j", 1000, {Ranged(0, "p/a", "p/m")});
  ShardRecord s = Shard(store(), "j", 0);
  EXPECT_TRUE(s.ranged);
  EXPECT_EQ(s.lower, "p/a");
  EXPECT_EQ(s.upper, "p/m");
  EXPECT_EQ(s.cursor, "");
  auto r = store().CommitListPage("j", Page(s, {"p/b", "p/c"}, false));
  ASSERT_TRUE(r.ok() && r->applied) << r.status().ToString();
  Reopen();
  s = Shard(store(), "j", 0);
  EXPECT_EQ(s.cursor, "p/c");
  EXPECT_EQ(s.seq, 1);
  // An empty page keeps the cursor where it was.
  r = store().CommitListPage("j", Page(s, {}, true));
  ASSERT_TRUE(r.ok() && r->applied);
  s = Shard(store(), "j", 0);
  EXPECT_EQ(s.cursor, "p/c");
  EXPECT_TRUE(s.done);
  EXPECT_TRUE(Job("j").listing_done);
}

TEST_P(StateStoreConformanceTest, SplitShardCutsTheUnlistedPartInTwoOrMore) {
  MakeJob("j", 1000, {Ranged(0, "", "")});
  ShardRecord s = Shard(store(), "j", 0);
  ASSERT_TRUE(store().CommitListPage("j", Page(s, {"p/a", "p/b"}, false)).ok());
  auto made = store().SplitShard("j", 0, "", {"p/d", "p/f"});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  ASSERT_EQ(made->size(), 2u);
  EXPECT_EQ((*made)[0].shard, 1);
  EXPECT_EQ((*made)[0].lower, "p/d");
  EXPECT_EQ((*made)[0].upper, "p/f");
  EXPECT_EQ((*made)[1].lower, "p/f");
  EXPECT_EQ((*made)[1].upper, "");
  EXPECT_TRUE((*made)[1].ranged);
  EXPECT_EQ((*made)[1].prefix, "p/");
  s = Shard(store(), "j", 0);
  EXPECT_EQ(s.upper, "p/d");
  EXPECT_EQ(s.cursor, "p/b");
  EXPECT_FALSE(Job("j").listing_done);

  // A page listed before the split still names the old upper: refused, so
  // keys the new shards own are not enqueued by this one.
  ListPageCommit stale = Page(s, {"p/c", "p/e"}, true);
  stale.upper = "";
  auto r = store().CommitListPage("j", stale);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->applied);
  EXPECT_EQ(Job("j").counters.listed, 2);

  // Each shard ends; the job's listing is done only with the last.
  ASSERT_TRUE(store().CommitListPage("j", Page(s, {"p/c"}, true))->applied);
  EXPECT_FALSE(Job("j").listing_done);
  ASSERT_TRUE(store().CommitListPage("j", Page(Shard(store(), "j", 1), {"p/e"}, true))->applied);
  ASSERT_TRUE(store().CommitListPage("j", Page(Shard(store(), "j", 2), {"p/g"}, true))->applied);
  EXPECT_TRUE(Job("j").listing_done);
  EXPECT_EQ(Job("j").counters.listed, 5);
  ExpectBalanced("j");

  // Numbers are never reused: a later split numbers after the highest.
  MakeJob("k", 1000, {Ranged(0, "", ""), Ranged(5, "z", "")});
  auto more = store().SplitShard("k", 0, "", {"m"});
  ASSERT_TRUE(more.ok()) << more.status().ToString();
  EXPECT_EQ(more->front().shard, 6);
}

TEST_P(StateStoreConformanceTest, SplitShardRefusesWhatWouldLoseOrDoubleKeys) {
  ShardRecord prefix_shard;
  prefix_shard.shard = 1;
  ShardRecord done = Ranged(2, "x", "");
  done.done = true;
  MakeJob("j", 1000, {Ranged(0, "p/a", "p/m"), prefix_shard, done});
  ShardRecord s = Shard(store(), "j", 0);
  ASSERT_TRUE(store().CommitListPage("j", Page(s, {"p/c"}, false)).ok());
  struct Case {
    int shard;
    std::string expect_upper;
    std::vector<std::string> bounds;
    ErrorCode want;
  } cases[] = {
      {0, "p/m", {"p/f", "p/e"}, ErrorCode::kInvalidArgument},     // not ascending
      {0, "p/m", {}, ErrorCode::kInvalidArgument},                 // nothing to split at
      {0, "p/m", {"p/b"}, ErrorCode::kPreconditionFailed},         // below the cursor
      {0, "p/m", {"p/c"}, ErrorCode::kPreconditionFailed},         // at the cursor
      {0, "p/m", {"p/m"}, ErrorCode::kInvalidArgument},            // at the upper bound
      {0, "p/z", {"p/f"}, ErrorCode::kPreconditionFailed},         // the upper moved
      {1, "", {"p/f"}, ErrorCode::kPreconditionFailed},            // a prefix shard
      {2, "", {"y"}, ErrorCode::kPreconditionFailed},              // done
      {9, "", {"y"}, ErrorCode::kNotFound},
  };
  for (const Case& c : cases) {
    auto r = store().SplitShard("j", c.shard, c.expect_upper, c.bounds);
    ASSERT_FALSE(r.ok()) << "shard " << c.shard << " at " << (c.bounds.empty() ? "" : c.bounds[0]);
    EXPECT_EQ(r.status().code(), c.want) << r.status().ToString();
  }
  auto shards = store().GetShards("j");
  ASSERT_TRUE(shards.ok());
  EXPECT_EQ(shards->size(), 3u) << "a refused split changes nothing";
  EXPECT_EQ(Shard(store(), "j", 0).upper, "p/m");
}

TEST_P(StateStoreConformanceTest, FallBackToFlatListingRelistsWhatWasListed) {
  // Before anything was listed: a plain flat listing.
  MakeJob("fresh", 1000, {Ranged(0, "", "")});
  auto flat = store().FallBackToFlatListing("fresh", "p/", "", "");
  ASSERT_TRUE(flat.ok()) << flat.status().ToString();
  EXPECT_FALSE(flat->ranged);
  EXPECT_FALSE(flat->relist);
  EXPECT_EQ(flat->prefix, "p/");
  EXPECT_EQ(flat->shard, 1);

  // After keys were listed, and some finished: the new shard relists, and
  // its keys arrive as claimed once already (their transfer checks first).
  MakeJob("j", 1000, {Ranged(0, "", "p/f"), Ranged(1, "p/f", "")});
  ASSERT_TRUE(store().CommitListPage("j", Page(Shard(store(), "j", 0), {"p/a", "p/b"}, false)).ok());
  ASSERT_EQ(ClaimKeys("j", "w", 1, 10), (std::vector<std::string>{"p/a"}));
  ASSERT_EQ(FinishKeys("j", "w", {"p/a"}), 1);
  // A dead letter stays one: the relist does not enqueue it again.
  ASSERT_TRUE(store().CommitListPage("j", Page(Shard(store(), "j", 1), {"p/x"}, false)).ok());
  ASSERT_EQ(ClaimKeys("j", "w", 10, 10), (std::vector<std::string>{"p/b", "p/x"}));
  ASSERT_TRUE(store().Release("j", "w", "p/b", 0).ok());
  DeadLetter d;
  d.key = "p/x";
  d.reason = "access denied";
  ASSERT_TRUE(store().DeadLetterObject("j", "w", d).ok());
  // Refused while p/b is pending: it could finish after the counters
  // started over and be counted again by the relist.
  auto early = store().FallBackToFlatListing("j", "p/", "", "");
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.status().code(), ErrorCode::kPreconditionFailed) << early.status().ToString();
  EXPECT_TRUE(early.status().retryable());
  EXPECT_EQ(store().GetShards("j")->size(), 2u);
  ASSERT_EQ(ClaimKeys("j", "w", 10, 10), (std::vector<std::string>{"p/b"}));
  ASSERT_EQ(FinishKeys("j", "w", {"p/b"}), 1);
  flat = store().FallBackToFlatListing("j", "p/", "", "");
  ASSERT_TRUE(flat.ok()) << flat.status().ToString();
  EXPECT_TRUE(flat->relist);
  EXPECT_EQ(flat->shard, 2);
  auto shards = store().GetShards("j");
  ASSERT_TRUE(shards.ok());
  ASSERT_EQ(shards->size(), 1u);
  EXPECT_FALSE(Job("j").listing_done);
  // A page of the old shards is refused now.
  ShardRecord gone = Ranged(0, "", "p/f");
  gone.seq = 1;
  auto stale = store().CommitListPage("j", Page(gone, {"p/c"}, true));
  ASSERT_TRUE(stale.ok()) << stale.status().ToString();
  EXPECT_FALSE(stale->applied) << "a shard the fallback replaced takes no page";
  EXPECT_EQ(store().CommitListPage("nope", Page(gone, {"p/c"}, true)).status().code(),
            ErrorCode::kNotFound);

  ListPageCommit page;
  page.shard = flat->shard;
  page.seq = 1;
  page.done = true;
  for (const char* k : {"p/a", "p/b", "p/c", "p/x"}) page.objects.push_back({k, 1, "e", 7});
  auto r = store().CommitListPage("j", page);
  ASSERT_TRUE(r.ok() && r->applied);
  // The counters started over: p/a and p/b (finished before) and p/c
  // (new) are enqueued, the dead letter p/x stays one.
  EXPECT_EQ(r->enqueued, 3);
  EXPECT_EQ(Job("j").counters.listed, 4);
  EXPECT_EQ(Job("j").counters.failed, 1);
  EXPECT_EQ(Job("j").counters.transferred, 0);
  EXPECT_TRUE(Job("j").listing_done);
  auto claimed = store().Claim("j", "w", 10, 20, 1'000'000);
  ASSERT_TRUE(claimed.ok());
  ASSERT_EQ(claimed->size(), 3u);
  for (const ClaimedObject& c : *claimed) {
    EXPECT_EQ(c.claims, 2) << c.object.key << " comes as if claimed once";
  }
  ExpectBalanced("j");
}

TEST_P(StateStoreConformanceTest, FallBackKeepsTheJobsRangeAndRefusesAFinishedJob) {
  MakeJob("part", 1000, {Ranged(0, "p/d", "p/m")});
  auto flat = store().FallBackToFlatListing("part", "p/", "p/d", "p/m");
  ASSERT_TRUE(flat.ok()) << flat.status().ToString();
  EXPECT_FALSE(flat->ranged);
  EXPECT_EQ(Shard(store(), "part", flat->shard).lower, "p/d");
  EXPECT_EQ(Shard(store(), "part", flat->shard).upper, "p/m");
  ListPageCommit page;
  page.shard = flat->shard;
  page.seq = 1;
  page.upper = "p/m";
  page.done = true;
  ASSERT_TRUE(store().CommitListPage("part", page)->applied) << "the upper bound fences it too";
  ASSERT_TRUE(store().SetJobState("part", JobState::kCompleted, 5, 0, true).ok());
  auto late = store().FallBackToFlatListing("part", "p/", "p/d", "p/m");
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.status().code(), ErrorCode::kPreconditionFailed);
  EXPECT_FALSE(late.status().retryable());
}

TEST_P(StateStoreConformanceTest, RequeuedKeysAreCopiedWhateverTheDestinationHolds) {
  MakeJob("j");
  Enqueue("j", {"a", "b"}, true);
  ASSERT_EQ(ClaimKeys("j", "w", 1, 10), (std::vector<std::string>{"a"}));
  ASSERT_EQ(FinishKeys("j", "w", {"a"}), 1);
  // "a" finished (added again, counted in listed); "b" is pending (marked).
  auto n = store().RequeueKeys("j", {{"a", 1, "e", 7}, {"b", 1, "e", 7}});
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 1);
  EXPECT_EQ(Job("j").counters.listed, 3);
  EXPECT_EQ(Job("j").counters.pending, 2);
  ExpectBalanced("j");
  auto claimed = store().Claim("j", "w", 10, 20, 1'000'000);
  ASSERT_TRUE(claimed.ok());
  ASSERT_EQ(claimed->size(), 2u);
  for (const ClaimedObject& c : *claimed) EXPECT_TRUE(c.force) << c.object.key;
  EXPECT_EQ(store().RequeueKeys("nope", {{"a", 1, "e", 7}}).status().code(), ErrorCode::kNotFound);
  // A dead letter moves back out of the dead-letter queue: counted once.
  MakeJob("d");
  Enqueue("d", {"x", "y"}, true);
  ASSERT_EQ(ClaimKeys("d", "w", 1, 10), (std::vector<std::string>{"x"}));
  DeadLetter dl;
  dl.key = "x";
  dl.reason = "access denied";
  ASSERT_TRUE(store().DeadLetterObject("d", "w", dl).ok());
  ASSERT_EQ(Job("d").counters.failed, 1);
  auto back = store().RequeueKeys("d", {{"x", 1, "e", 7}});
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, 1);
  JobCounters dc = Job("d").counters;
  EXPECT_EQ(dc.failed, 0);
  EXPECT_EQ(dc.listed, 2);
  EXPECT_EQ(dc.pending, 2);
  EXPECT_TRUE(store().ListDeadLetters("d")->empty());
  ExpectBalanced("d");
  // A key listed the ordinary way is not forced.
  MakeJob("k");
  Enqueue("k", {"c"}, true);
  auto plain = store().Claim("k", "w", 10, 20, 1'000'000);
  ASSERT_TRUE(plain.ok() && plain->size() == 1);
  EXPECT_FALSE(plain->front().force);
}

TEST_P(StateStoreConformanceTest, UnchangedKeysCountAsListedAndSkipped) {
  MakeJob("j");
  ListPageCommit page;
  page.seq = 1;
  page.done = true;
  page.objects.push_back({"new", 1, "e", 7});
  page.unchanged = 41;
  auto r = store().CommitListPage("j", page);
  ASSERT_TRUE(r.ok() && r->applied);
  EXPECT_EQ(r->enqueued, 1);
  JobCounters c = Job("j").counters;
  EXPECT_EQ(c.listed, 42);
  EXPECT_EQ(c.skipped, 41);
  EXPECT_EQ(c.pending, 1);
  ExpectBalanced("j");
  // A replayed page counts nothing again.
  EXPECT_FALSE(store().CommitListPage("j", page)->applied);
  EXPECT_EQ(Job("j").counters.skipped, 41);
}

}  // namespace
}  // namespace ferry::state
