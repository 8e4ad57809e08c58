// The PostgreSQL StateStore against a real server: the StateStore
// conformance suite (the same cases the SQLite store passes), plus what is
// PostgreSQL's own: claimers in several stores (as several worker
// processes would be) never share a row, a server restart is survived with
// retryable errors and no lost or doubled count, and the location strings
// `--state` accepts.

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "pg/pg_test_cluster.h"
#include "state/pg_state_store.h"
#include "state/state_store.h"
#include "state/state_store_conformance_test.h"

namespace ferry::state {
namespace {

void SkipWith(const std::string& why) { FERRY_SKIP_WITHOUT_PEER(why); }

// The conformance factory: each test directory gets a database of its own,
// and opening the same directory again opens the same database.
Result<std::unique_ptr<StateStore>> MakePg(const std::string& dir) {
  static std::mutex mu;
  static std::map<std::string, std::string> databases;
  std::string conninfo;
  {
    std::lock_guard lock(mu);
    auto it = databases.find(dir);
    if (it == databases.end()) {
      std::string why;
      std::string fresh = testing_pg::FreshDatabase(&why);
      if (fresh.empty()) {
        SkipWith(why);
        return Status::Unsupported(why);
      }
      it = databases.emplace(dir, fresh).first;
    }
    conninfo = it->second;
  }
  return OpenPgStateStore(conninfo);
}

INSTANTIATE_TEST_SUITE_P(Pg, StateStoreConformanceTest,
                         ::testing::Values(StateStoreParam{"Pg", MakePg}), StateStoreParamName);

std::unique_ptr<StateStore> Open(const std::string& conninfo) {
  auto s = OpenPgStateStore(conninfo);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

void MakeJobWithKeys(StateStore& store, const std::string& id, int n) {
  JobRecord job;
  job.id = id;
  job.src = "s3://a";
  job.dst = "s3://b";
  job.spec = "{}";
  ASSERT_TRUE(store.CreateJob(job, {}).ok());
  ListPageCommit page;
  page.seq = 1;
  page.done = true;
  for (const std::string& k : NumberedKeys(n)) page.objects.push_back({k, 1, "e", 0});
  auto r = store.CommitListPage(id, page);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->enqueued, n);
}

// Four stores (four worker processes' worth) with four threads each claim
// and finish one job's rows: every row is claimed by one owner at a time,
// every key is counted once, and the counters balance.
TEST(PgStateStore, SixteenClaimersOnFourStoresShareAJobExactly) {
  FERRY_REQUIRE_PG(db);
  auto first = Open(db);
  ASSERT_TRUE(first);
  const int n = 4000;
  MakeJobWithKeys(*first, "j", n);
  std::vector<std::unique_ptr<StateStore>> stores;
  for (int i = 0; i < 4; ++i) stores.push_back(Open(db));
  std::mutex mu;
  std::multiset<std::string> claimed, finished;
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      StateStore& s = *stores[static_cast<size_t>(t % 4)];
      const std::string owner = "w" + std::to_string(t);
      for (;;) {
        auto got = s.Claim("j", owner, 37, 1, 1'000'000'000);
        if (!got.ok()) {
          ++errors;
          return;
        }
        if (got->empty()) return;
        std::vector<FinishedObject> done;
        for (const ClaimedObject& c : *got) done.push_back({c.object.key, Outcome::kTransferred, 1});
        auto counted = s.Finish("j", owner, done);
        if (!counted.ok()) {
          ++errors;
          return;
        }
        std::lock_guard lock(mu);
        for (const ClaimedObject& c : *got) claimed.insert(c.object.key);
        for (size_t i = 0; i < done.size(); ++i) {
          if ((*counted)[i]) finished.insert(done[i].key);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  // No lease expires here, so a key claimed twice was handed to two owners.
  EXPECT_EQ(claimed.size(), static_cast<size_t>(n));
  EXPECT_EQ(std::set<std::string>(claimed.begin(), claimed.end()).size(), static_cast<size_t>(n))
      << "a row was claimed by two owners at once";
  EXPECT_EQ(finished.size(), static_cast<size_t>(n));
  EXPECT_EQ(std::set<std::string>(finished.begin(), finished.end()).size(), static_cast<size_t>(n))
      << "a key was counted twice";
  auto job = first->GetJob("j");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->counters.listed, n);
  EXPECT_EQ(job->counters.transferred, n);
  EXPECT_EQ(job->counters.bytes, n);
  EXPECT_EQ(job->counters.pending, 0);
  EXPECT_EQ(*first->CountRows("j"), 0);
}

// The hot statements stay on their indexes whatever the statistics say (a
// queue's are always stale): Claim reads the unowned rows off
// objects_unowned, Finish finds rows by primary key, and neither scans the
// table. Before the store's session setting and the partial index, Finish
// took a sequential scan and grew with the job.
TEST(PgStateStore, ClaimAndFinishPlansUseTheirIndexes) {
  FERRY_REQUIRE_PG(db);
  auto store = Open(db);
  ASSERT_TRUE(store);
  MakeJobWithKeys(*store, "j", 3000);
  auto got = store->Claim("j", "w", 1000, 1, 1'000'000'000);  // some leased, most not
  ASSERT_TRUE(got.ok());
  auto c = testing_pg::Connect(db);
  ASSERT_TRUE(c);
  // As the store's sessions (ConfigureSession).
  ASSERT_TRUE(c->ExecScript("SET enable_seqscan = off; SET enable_bitmapscan = off").ok());
  auto plan = [&](const std::string& sql, const std::string& args) {
    std::string name = "p" + std::to_string(std::hash<std::string>()(sql) % 100000);
    EXPECT_TRUE(c->ExecScript("PREPARE " + name + " AS " + sql).ok());
    auto r = c->Exec("EXPLAIN EXECUTE " + name + args);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    std::string text;
    for (int i = 0; r.ok() && i < r->size(); ++i) text += r->Text(i, 0) + "\n";
    return text;
  };
  std::string claim = plan(PgStateStore::kClaimSql, "('j', 2, 256, 'w2', 999999999)");
  EXPECT_NE(claim.find("Index Scan using objects_unowned"), std::string::npos) << claim;
  EXPECT_EQ(claim.find("Seq Scan"), std::string::npos) << claim;
  // Read in key order off the index, stopping at the limit: no sort of every
  // unowned row (the expired-lease range is short, and sorted).
  EXPECT_EQ(claim.find("Sort Key: objects.key"), std::string::npos) << claim;
  std::string finish =
      plan(PgStateStore::kFinishSql, "('j', 'w', '{k00001,k00002}', '{1,1}', '{f,f}')");
  EXPECT_NE(finish.find("objects_pkey"), std::string::npos) << finish;
  EXPECT_EQ(finish.find("Seq Scan on objects"), std::string::npos) << finish;
}

// Hundreds of threads on one store (a runner's workers reporting at once)
// share at most kMaxOpen server sessions: the rest wait for one.
TEST(PgStateStore, ManyThreadsShareABoundedNumberOfSessions) {
  FERRY_REQUIRE_PG(db);
  auto store = Open(db);
  ASSERT_TRUE(store);
  MakeJobWithKeys(*store, "j", 10);
  auto watcher = testing_pg::Connect(db);
  ASSERT_TRUE(watcher);
  std::atomic<bool> done{false};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 128; ++t) {
    threads.emplace_back([&] {
      while (!done) {
        if (!store->GetJob("j").ok()) ++errors;
      }
    });
  }
  int64_t most = 0;
  for (int i = 0; i < 40; ++i) {
    auto n = watcher->Exec(
        "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND pid <> pg_backend_pid()");
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    most = std::max(most, n->Int(0, 0));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  done = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_GE(most, 2) << "the threads did share the work";
  EXPECT_LE(most, static_cast<int64_t>(PgStateStore::kMaxOpen));
}

// Listers of one job's shards, each in its own store, commit their last
// pages at once: whichever commits last must see every shard done, or the
// job would wait for a listing that already ended. (In READ COMMITTED each
// transaction alone sees the others' shards as still listing: the store
// serialises the end of a page commit on the job's row.)
TEST(PgStateStore, ShardsFinishingTogetherEndTheListing) {
  FERRY_REQUIRE_PG(db);
  auto first = Open(db);
  ASSERT_TRUE(first);
  const int shards = 8;
  for (int round = 0; round < 5; ++round) {
    const std::string id = "j" + std::to_string(round);
    std::vector<ShardRecord> records;
    for (int i = 0; i < shards; ++i) {
      ShardRecord r;
      r.shard = i;
      r.prefix = "p" + std::to_string(i) + "/";
      records.push_back(r);
    }
    JobRecord job;
    job.id = id;
    job.spec = "{}";
    ASSERT_TRUE(first->CreateJob(job, records).ok());
    std::vector<std::unique_ptr<StateStore>> stores;
    for (int i = 0; i < shards; ++i) stores.push_back(Open(db));
    std::vector<std::thread> threads;
    std::atomic<int> ready{0};
    for (int i = 0; i < shards; ++i) {
      threads.emplace_back([&, i] {
        ListPageCommit page;
        page.shard = i;
        page.seq = 1;
        page.done = true;
        for (int k = 0; k < 50; ++k) {
          page.objects.push_back({"p" + std::to_string(i) + "/" + std::to_string(k), 1, "e", 0});
        }
        ++ready;
        while (ready.load() < shards) std::this_thread::yield();
        auto r = stores[static_cast<size_t>(i)]->CommitListPage(id, page);
        EXPECT_TRUE(r.ok() && r->applied) << r.status().ToString();
      });
    }
    for (auto& t : threads) t.join();
    auto got = first->GetJob(id);
    ASSERT_TRUE(got.ok());
    EXPECT_TRUE(got->listing_done) << "round " << round;
    EXPECT_EQ(got->counters.listed, shards * 50);
  }
}

// A server restart under an open store: calls fail with retryable errors
// while it is down (or succeed after a reconnect), nothing is counted twice
// or lost, and the store works again without being reopened.
TEST(PgStateStore, AServerRestartIsRetryableAndLosesNothing) {
  FERRY_PRIVATE_PG(cluster);
  auto store = Open(cluster.conninfo());
  ASSERT_TRUE(store);
  const int n = 500;
  MakeJobWithKeys(*store, "j", n);

  // Claim everything, finish half, restart, finish the rest.
  auto got = store->Claim("j", "w", n, 1, 1'000'000'000);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), static_cast<size_t>(n));
  std::vector<FinishedObject> first, second;
  for (int i = 0; i < n; ++i) {
    ((i % 2 == 0) ? first : second).push_back({(*got)[static_cast<size_t>(i)].object.key,
                                               Outcome::kTransferred, 2});
  }
  ASSERT_TRUE(store->Finish("j", "w", first).ok());
  ASSERT_TRUE(cluster.Restart());

  // The idle pooled connections died with the server; the next calls
  // reconnect. A retry loop like the runner's: only retryable errors.
  int64_t counted = 0;
  for (int attempt = 0;; ++attempt) {
    auto r = store->Finish("j", "w", second);
    if (r.ok()) {
      for (bool c : *r) counted += c ? 1 : 0;
      break;
    }
    ASSERT_TRUE(r.status().retryable()) << r.status().ToString();
    ASSERT_LT(attempt, 50) << r.status().ToString();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(counted, n / 2);
  // A repeat (as after a commit whose answer was lost) counts nothing.
  auto again = store->Finish("j", "w", second);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  for (bool c : *again) EXPECT_FALSE(c);
  auto job = store->GetJob("j");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->counters.transferred, n);
  EXPECT_EQ(job->counters.bytes, 2 * n);
  EXPECT_EQ(job->counters.pending, 0);
}

}  // namespace
}  // namespace ferry::state
