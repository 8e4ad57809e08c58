#include "engine/rate_limiter.h"

#include <gtest/gtest.h>

#include <chrono>

namespace ferry {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using Clock = RateLimiter::Clock;

TEST(RateLimiter, UnlimitedNeverWaits) {
  for (double rate : {0.0, -5.0}) {
    RateLimiter r(rate);
    EXPECT_TRUE(r.unlimited());
    Clock::time_point t{};
    for (int i = 0; i < 1000; ++i) EXPECT_EQ(r.Reserve(1e12, t).count(), 0);
    EXPECT_TRUE(r.Take(1e15));
  }
}

TEST(RateLimiter, DefaultBurstIsOneSecondAtLeastOne) {
  EXPECT_EQ(RateLimiter(1000).burst(), 1000);
  EXPECT_EQ(RateLimiter(0.2).burst(), 1);
  EXPECT_EQ(RateLimiter(1000, 50).burst(), 50);
  EXPECT_FALSE(RateLimiter(1000).unlimited());
}

TEST(RateLimiter, BurstPassesThenRequestsAreSpaced) {
  RateLimiter r(1000);  // burst 1000
  Clock::time_point t{};
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(r.Reserve(1, t).count(), 0) << i;
  // The bucket is empty: a caller that waits out each reservation is spaced
  // 1 ms apart on average.
  const Clock::time_point start = t;
  for (int i = 0; i < 10'000; ++i) t += r.Reserve(1, t);
  auto elapsed = std::chrono::duration_cast<milliseconds>(t - start);
  EXPECT_NEAR(static_cast<double>(elapsed.count()), 10'000.0, 1.0);
}

TEST(RateLimiter, DebtIsSharedAmongCallers) {
  RateLimiter r(100, 10);
  Clock::time_point t{};
  EXPECT_EQ(r.Reserve(10, t).count(), 0);
  // Three callers at the same instant queue up behind one another.
  EXPECT_EQ(r.Reserve(1, t), milliseconds(10));
  EXPECT_EQ(r.Reserve(1, t), milliseconds(20));
  EXPECT_EQ(r.Reserve(1, t), milliseconds(30));
}

TEST(RateLimiter, LargeRequestWaitsLonger) {
  RateLimiter r(1000, 100);
  Clock::time_point t{};
  EXPECT_EQ(r.Reserve(5100, t), milliseconds(5000));  // 100 from the bucket
  EXPECT_EQ(r.Reserve(1, t + milliseconds(5000)), milliseconds(1));
}

TEST(RateLimiter, IdleRefillsOnlyUpToBurst) {
  RateLimiter r(10, 5);
  Clock::time_point t{};
  EXPECT_EQ(r.Reserve(5, t).count(), 0);
  t += std::chrono::hours(1);
  EXPECT_EQ(r.Reserve(5, t).count(), 0);
  EXPECT_EQ(r.Reserve(1, t), milliseconds(100));
}

TEST(RateLimiter, ClockGoingBackCountsAsNoTime) {
  RateLimiter r(10, 1);
  Clock::time_point t = Clock::time_point{} + std::chrono::seconds(10);
  EXPECT_EQ(r.Reserve(1, t).count(), 0);
  EXPECT_EQ(r.Reserve(1, t - std::chrono::seconds(5)), milliseconds(100));
}

TEST(RateLimiter, TakeSleepsBriefly) {
  RateLimiter r(1000, 1);
  auto start = Clock::now();
  EXPECT_TRUE(r.Take(1));
  EXPECT_TRUE(r.Take(5));  // 5 ms of debt
  EXPECT_GE(Clock::now() - start, milliseconds(4));
}

}  // namespace
}  // namespace ferry
