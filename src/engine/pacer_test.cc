#include "engine/pacer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace ferry {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

PacerOptions PacerOpts(int max, int min = 1, int every = 4) {
  PacerOptions o;
  o.max = max;
  o.min = min;
  o.increase_every = every;
  o.decrease_interval = milliseconds(1000);
  return o;
}

TEST(Pacer, StartsAtMax) {
  Pacer p(PacerOpts(8));
  EXPECT_EQ(p.limit(), 8);
  EXPECT_EQ(p.in_flight(), 0);
  EXPECT_EQ(p.throttles(), 0u);
  EXPECT_EQ(p.decreases(), 0u);
}

TEST(Pacer, TryAcquireTakesOnlyFreeSlotsAndSharesThemWithAcquire) {
  Pacer p(PacerOpts(2));
  EXPECT_TRUE(p.TryAcquire());
  EXPECT_TRUE(p.Acquire());
  EXPECT_FALSE(p.TryAcquire()) << "the limit is reached";
  EXPECT_EQ(p.in_flight(), 2);
  p.Release();
  EXPECT_TRUE(p.TryAcquire());
  p.OnThrottle(Clock::time_point{});  // the limit falls to 1 with 2 in flight
  p.Release();
  EXPECT_FALSE(p.TryAcquire()) << "in flight (1) is not below the lowered limit (1)";
  p.Release();
  EXPECT_TRUE(p.TryAcquire());
  EXPECT_EQ(p.in_flight(), 1);
}

TEST(Pacer, TryAcquireLeavesAFreedSlotToAWaitingAcquire) {
  Pacer p(PacerOpts(1));
  ASSERT_TRUE(p.TryAcquire());
  std::atomic<bool> got{false};
  std::thread waiter([&] { got = p.Acquire(); });
  std::this_thread::sleep_for(milliseconds(100));  // the waiter is inside Acquire
  p.Release();
  bool stolen = p.TryAcquire();
  EXPECT_FALSE(stolen) << "the freed slot belongs to the waiter";
  if (stolen) p.Release();  // so a failure does not hang the join below
  waiter.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(p.in_flight(), 1);
  p.Release();
  EXPECT_TRUE(p.TryAcquire()) << "no one waits any more";
}

TEST(Pacer, ThrottleHalvesOncePerInterval) {
  Pacer p(PacerOpts(64));
  Clock::time_point t0{};
  p.OnThrottle(t0);
  EXPECT_EQ(p.limit(), 32);
  p.OnThrottle(t0 + milliseconds(1));  // same overload: ignored
  p.OnThrottle(t0 + milliseconds(999));
  EXPECT_EQ(p.limit(), 32);
  p.OnThrottle(t0 + milliseconds(1000));  // next interval
  EXPECT_EQ(p.limit(), 16);
  EXPECT_EQ(p.throttles(), 4u);
  EXPECT_EQ(p.decreases(), 2u);
}

TEST(Pacer, NeverBelowMin) {
  Pacer p(PacerOpts(64, 5));
  Clock::time_point t{};
  for (int i = 0; i < 20; ++i) p.OnThrottle(t += milliseconds(1000));
  EXPECT_EQ(p.limit(), 5);
  EXPECT_EQ(p.decreases(), 4u);  // 64 -> 32 -> 16 -> 8 -> 5
  Pacer one(PacerOpts(3));
  for (int i = 0; i < 5; ++i) one.OnThrottle(t += milliseconds(1000));
  EXPECT_EQ(one.limit(), 1);
}

TEST(Pacer, ClimbsBackOnePerIncreaseEveryUpToMax) {
  Pacer p(PacerOpts(8, 1, 4));
  p.OnThrottle(Clock::time_point{});
  ASSERT_EQ(p.limit(), 4);
  for (int i = 0; i < 3; ++i) p.OnSuccess();
  EXPECT_EQ(p.limit(), 4);
  p.OnSuccess();
  EXPECT_EQ(p.limit(), 5);
  for (int i = 0; i < 4 * 3; ++i) p.OnSuccess();
  EXPECT_EQ(p.limit(), 8);
  for (int i = 0; i < 100; ++i) p.OnSuccess();
  EXPECT_EQ(p.limit(), 8);
}

TEST(Pacer, ThrottleResetsProgressTowardIncrease) {
  Pacer p(PacerOpts(8, 1, 4));
  Clock::time_point t0{};
  p.OnThrottle(t0);
  for (int i = 0; i < 3; ++i) p.OnSuccess();
  p.OnThrottle(t0 + milliseconds(10));  // within the interval: no decrease
  EXPECT_EQ(p.limit(), 4);
  p.OnSuccess();
  EXPECT_EQ(p.limit(), 4);  // progress started over
}

TEST(Pacer, OptionsAreClamped) {
  PacerOptions o;
  o.max = 0;
  o.min = 7;
  o.increase_every = 0;
  o.decrease = 3.0;
  Pacer p(o);
  EXPECT_EQ(p.limit(), 1);
  p.OnSuccess();
  EXPECT_EQ(p.limit(), 1);
}

TEST(Pacer, AcquireBlocksAtLimitAndWakesOnRelease) {
  Pacer p(PacerOpts(2));
  ASSERT_TRUE(p.Acquire());
  ASSERT_TRUE(p.Acquire());
  EXPECT_EQ(p.in_flight(), 2);
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    EXPECT_TRUE(p.Acquire());
    got = true;
  });
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_FALSE(got.load());
  p.Release();
  waiter.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(p.in_flight(), 2);
}

TEST(Pacer, AcquireWakesWhenLimitRises) {
  Pacer p(PacerOpts(2, 1, 1));
  p.OnThrottle(Clock::time_point{});
  ASSERT_EQ(p.limit(), 1);
  ASSERT_TRUE(p.Acquire());
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    EXPECT_TRUE(p.Acquire());
    got = true;
  });
  std::this_thread::sleep_for(milliseconds(10));
  EXPECT_FALSE(got.load());
  p.OnSuccess();  // limit 2: room for the waiter without a Release
  waiter.join();
  EXPECT_EQ(p.in_flight(), 2);
}

TEST(Pacer, AcquireReturnsFalseOnStop) {
  Pacer p(PacerOpts(1));
  ASSERT_TRUE(p.Acquire());
  std::atomic<bool> stop{false};
  std::atomic<bool> result{true};
  std::thread waiter([&] { result = p.Acquire(&stop); });
  std::this_thread::sleep_for(milliseconds(10));
  stop = true;
  waiter.join();
  EXPECT_FALSE(result.load());
  EXPECT_EQ(p.in_flight(), 1);     // no slot taken
  EXPECT_FALSE(p.Acquire(&stop));  // full and stopping
  p.Release();
  EXPECT_FALSE(p.Acquire(&stop));  // room, but stopping
  EXPECT_EQ(p.in_flight(), 0);
}

TEST(Pacer, ManyThreadsNeverExceedLimit) {
  Pacer p(PacerOpts(3));
  std::atomic<int> now{0}, peak{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        ASSERT_TRUE(p.Acquire());
        int n = ++now;
        int prev = peak.load();
        while (n > prev && !peak.compare_exchange_weak(prev, n)) {
        }
        --now;
        p.Release();
        p.OnSuccess();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LE(peak.load(), 3);
  EXPECT_EQ(p.in_flight(), 0);
}

}  // namespace
}  // namespace ferry
