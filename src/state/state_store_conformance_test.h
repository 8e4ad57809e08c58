#pragma once
// The StateStore conformance suite: one set of gtest cases every StateStore
// implementation must pass (the rules at the top of state/state_store.h).
// The cases live in state_store_conformance_test.cc, which builds into the
// unit-test binary; an implementation instantiates the suite beside its own
// tests:
//
//   INSTANTIATE_TEST_SUITE_P(
//       Sqlite, StateStoreConformanceTest,
//       ::testing::Values(ferry::state::StateStoreParam{"Sqlite", MakeSqlite}),
//       ferry::state::StateStoreParamName);
//
// The factory gets a fresh, empty directory per test and opens a store "in"
// it. Called again with the same directory it must open another handle on
// the same database (as a second process would): the suite uses that for
// reopening (persistence) and for two-instance concurrency. A server-backed
// store can map the directory to a database or schema name; a factory with
// no server to use calls GTEST_SKIP() (from a void helper) and returns an
// error, and the case skips.

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"
#include "state/state_store.h"

namespace ferry::state {

using StateStoreFactory =
    std::function<Result<std::unique_ptr<StateStore>>(const std::string& dir)>;

struct StateStoreParam {
  std::string name;  // letters, digits and '_' (test names)
  StateStoreFactory factory;
};

// For INSTANTIATE_TEST_SUITE_P: names each instantiation after `name`.
std::string StateStoreParamName(const ::testing::TestParamInfo<StateStoreParam>& info);
void PrintTo(const StateStoreParam& param, std::ostream* os);

class StateStoreConformanceTest : public ::testing::TestWithParam<StateStoreParam> {
 protected:
  void SetUp() override;     // a temp directory and a store in it
  void TearDown() override;  // closes the stores, removes the directory

  StateStore& store() { return *store_; }
  const std::string& dir() const { return dir_; }
  // Another handle on the same database (a second process's worth).
  std::unique_ptr<StateStore> OpenAnother();
  // Closes store() and opens it again.
  void Reopen();

  // Helpers that fail the test on error.
  // Creates job `id` with `shards` (shard 0 with prefix "" when empty).
  void MakeJob(const std::string& id, int64_t created_ms = 1000,
               std::vector<ShardRecord> shards = {});
  JobRecord Job(const std::string& id);
  // Commits the next page of shard 0 with `keys` (size = key length).
  ListPageResult Enqueue(const std::string& job, const std::vector<std::string>& keys,
                         bool done = false);
  std::vector<std::string> ClaimKeys(const std::string& job, const std::string& owner, int max,
                                     int64_t now_ms, int64_t lease_until_ms = 1'000'000'000);
  // Finishes `keys` as transferred; returns how many were counted.
  int FinishKeys(const std::string& job, const std::string& owner,
                 const std::vector<std::string>& keys);
  // Asserts transferred + skipped + failed + pending == listed, and that
  // pending matches the rows CountRows sees (no uploads or dead letters
  // expected when `exact_rows`).
  void ExpectBalanced(const std::string& job);

 private:
  std::string dir_;
  std::unique_ptr<StateStore> store_;
};

// A prefix shard (ShardRecord's first fields).
ShardRecord PrefixShard(int shard, std::string prefix, std::string delimiter, int64_t seq,
                        std::string token, bool done);

// Keys "k00000", "k00001"... for tests that need many.
std::vector<std::string> NumberedKeys(int n, const std::string& prefix = "k");

}  // namespace ferry::state
