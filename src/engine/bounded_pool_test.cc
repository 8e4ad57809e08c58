#include "engine/bounded_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace ferry::engine {
namespace {

// A gate the tasks wait at until the test opens it.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  void Wait() {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return open; });
  }
  void Open() {
    {
      std::lock_guard lock(mu);
      open = true;
    }
    cv.notify_all();
  }
};

TEST(BoundedPool, ThreadsAndQueueAreBoundedAndTheRestIsRefused) {
  Gate gate;
  std::atomic<int> ran{0};
  {
    BoundedPool pool(3, 2);
    int accepted = 0;
    for (int i = 0; i < 2000; ++i) {
      accepted += pool.TrySubmit([&] {
        gate.Wait();
        ++ran;
      });
    }
    EXPECT_EQ(accepted, 5);  // three running, two waiting
    BoundedPoolStats s = pool.Stats();
    EXPECT_EQ(s.threads, 3u);
    EXPECT_EQ(s.queued, 2u);
    EXPECT_EQ(s.rejected, 1995u);
    gate.Open();
  }  // the destructor runs what was queued
  EXPECT_EQ(ran, 5);
}

TEST(BoundedPool, IdleThreadsAreReusedBeforeNewOnesStart) {
  BoundedPool pool(8, 0);
  for (int i = 0; i < 50; ++i) {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    ASSERT_TRUE(pool.TrySubmit([&] {
      std::lock_guard lock(mu);
      done = true;
      cv.notify_all();
    }));
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return done; });
    lock.unlock();
    while (pool.Stats().running != 0) std::this_thread::yield();
  }
  // One task at a time: the thread that finished takes the next.
  EXPECT_EQ(pool.Stats().threads, 1u);
  EXPECT_EQ(pool.Stats().rejected, 0u);
}

TEST(BoundedPool, AZeroQueueRunsOnlyWhatThreadsCanTake) {
  Gate gate;
  BoundedPool pool(2, 0);
  EXPECT_TRUE(pool.TrySubmit([&] { gate.Wait(); }));
  EXPECT_TRUE(pool.TrySubmit([&] { gate.Wait(); }));
  EXPECT_FALSE(pool.TrySubmit([] {}));
  gate.Open();
}

}  // namespace
}  // namespace ferry::engine
