#include "http/h2_reset_limiter.h"

#include <gtest/gtest.h>

namespace ferry::http {
namespace {

using Clock = ResetLimiter::Clock;
using std::chrono::milliseconds;

TEST(ResetLimiter, BurstThenTrippedForGood) {
  const Clock::time_point t0{};
  ResetLimiter l({.burst = 5, .per_second = 10}, t0);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(l.Allow(t0)) << i;
  EXPECT_FALSE(l.Allow(t0));
  // Tripped: even after a long quiet spell it stays so.
  EXPECT_FALSE(l.Allow(t0 + std::chrono::hours(1)));
}

TEST(ResetLimiter, RefillsAtTheRateUpToTheBurst) {
  const Clock::time_point t0{};
  ResetLimiter l({.burst = 4, .per_second = 10}, t0);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(l.Allow(t0));
  // 100 ms later: one more token.
  EXPECT_TRUE(l.Allow(t0 + milliseconds(100)));
  // A steady rate at the limit goes on for ever.
  Clock::time_point t = t0 + milliseconds(100);
  for (int i = 0; i < 1000; ++i) {
    t += milliseconds(100);
    ASSERT_TRUE(l.Allow(t)) << i;
  }
  // A long pause refills the burst, not more.
  t += std::chrono::seconds(60);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(l.Allow(t)) << i;
  EXPECT_FALSE(l.Allow(t));
}

TEST(ResetLimiter, FasterThanTheRateTrips) {
  const Clock::time_point t0{};
  ResetLimiter l({.burst = 10, .per_second = 10}, t0);
  Clock::time_point t = t0;
  int allowed = 0;
  // 20 a second for 10 s: 10 in the burst + 10 per second; trips within 2 s.
  for (int i = 0; i < 200 && l.Allow(t); ++i, t += milliseconds(50)) ++allowed;
  EXPECT_GE(allowed, 19);
  EXPECT_LE(allowed, 21);
}

TEST(ResetLimiter, TimeGoingBackIsIgnored) {
  const Clock::time_point t0 = Clock::time_point{} + std::chrono::seconds(10);
  ResetLimiter l({.burst = 2, .per_second = 1}, t0);
  EXPECT_TRUE(l.Allow(t0));
  EXPECT_TRUE(l.Allow(t0 - std::chrono::seconds(5)));
  EXPECT_FALSE(l.Allow(t0 - std::chrono::seconds(5)));
}

}  // namespace
}  // namespace ferry::http
