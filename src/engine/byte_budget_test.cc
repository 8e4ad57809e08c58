#include "engine/byte_budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace ferry {
namespace {

TEST(ByteBudget, TryAcquireNeverWaitsAndClampsToTheCapacity) {
  ByteBudget b(100);
  uint64_t a = 0, c = 0, big = 0, zero = 99;
  EXPECT_TRUE(b.TryAcquire(60, &a));
  EXPECT_EQ(a, 60u);
  EXPECT_FALSE(b.TryAcquire(41, &c)) << "only 40 are free";
  EXPECT_TRUE(b.TryAcquire(40, &c));
  EXPECT_TRUE(b.TryAcquire(0, &zero)) << "an empty object needs nothing";
  EXPECT_EQ(zero, 0u);
  b.Release(a);
  b.Release(c);
  EXPECT_TRUE(b.TryAcquire(1000, &big)) << "larger than the budget: clamped, runs alone";
  EXPECT_EQ(big, 100u);
  b.Release(big);
}

TEST(ByteBudget, AnEarlyReleaseWakesAWaiterAndIsNotRepeated) {
  ByteBudget b(100);
  uint64_t taken = 0;
  ASSERT_TRUE(b.TryAcquire(100, &taken));
  std::atomic<bool> got{false};
  {
    BudgetHold hold(&b, taken, BudgetHold::Adopt{});
    std::thread waiter([&] {
      BudgetHold h(&b, 70);
      got = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(got.load()) << "the budget is all held";
    hold.Release();
    waiter.join();
    EXPECT_TRUE(got.load());
  }  // the hold's destructor must not give the bytes back a second time
  uint64_t all = 0;
  EXPECT_TRUE(b.TryAcquire(100, &all));
  uint64_t more = 0;
  EXPECT_FALSE(b.TryAcquire(1, &more)) << "a double release would have freed 100 more";
}

TEST(ByteBudget, TryAcquireLeavesFreedBytesToAWaitingAcquire) {
  ByteBudget b(100);
  uint64_t first = 0, small = 0;
  ASSERT_TRUE(b.TryAcquire(80, &first));
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    BudgetHold h(&b, 60);  // waits: only 20 are free
    got = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the waiter is inside Acquire
  EXPECT_FALSE(b.TryAcquire(10, &small)) << "10 are free, but someone waits for bytes";
  EXPECT_FALSE(got.load());
  b.Release(first);
  waiter.join();
  EXPECT_TRUE(got.load());
  EXPECT_TRUE(b.TryAcquire(100, &first)) << "everything is free again";
}

}  // namespace
}  // namespace ferry
