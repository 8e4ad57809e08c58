#include "base/elastic_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>

namespace ferry {
namespace {

using namespace std::chrono_literals;

TEST(ElasticPool, RunsEveryTaskWithinItsThreadBound) {
  std::atomic<int> ran{0}, now{0}, most{0};
  {
    ElasticPool pool(3, 1s);
    for (int i = 0; i < 30; ++i) {
      ASSERT_TRUE(pool.Submit([&] {
        int n = ++now;
        for (int m = most.load(); n > m && !most.compare_exchange_weak(m, n);) {
        }
        std::this_thread::sleep_for(2ms);
        --now;
        ++ran;
      }));
    }
    EXPECT_LE(pool.threads(), 3u);
  }  // the destructor runs what is queued
  EXPECT_EQ(ran.load(), 30);
  EXPECT_LE(most.load(), 3);
  EXPECT_GE(most.load(), 2);
}

TEST(ElasticPool, ReusesIdleThreadsAndEndsThemWhenIdleLong) {
  ElasticPool pool(8, 200ms);
  std::mutex mu;
  std::set<std::thread::id> ids;
  for (int i = 0; i < 20; ++i) {
    std::atomic<bool> done{false};
    pool.Submit([&] {
      std::lock_guard lock(mu);
      ids.insert(std::this_thread::get_id());
      done = true;
    });
    while (!done) std::this_thread::sleep_for(100us);
    while (pool.idle() != 1) std::this_thread::sleep_for(100us);  // the thread is idle again
  }
  EXPECT_EQ(ids.size(), 1u);  // one after another: one thread
  EXPECT_EQ(pool.threads(), 1u);
  for (int i = 0; i < 1000 && pool.threads() > 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(pool.threads(), 0u);
  std::atomic<bool> again{false};
  pool.Submit([&] { again = true; });  // a new thread for a task after that
  for (int i = 0; i < 10'000 && !again; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(again.load());
}

}  // namespace
}  // namespace ferry
