#include "volume/rate_meter.h"

#include <gtest/gtest.h>

namespace ferry::volume {
namespace {

TEST(RateMeterTest, FollowsTheRateInUseAndForgetsThePast) {
  RateMeter m(1.0);
  m.Sample(0, 0);
  EXPECT_EQ(m.rate(), 0);
  for (int s = 1; s <= 10; ++s) m.Sample(s, static_cast<uint64_t>(s) * 1000);  // 1000 B/s
  EXPECT_NEAR(m.rate(), 1000, 1);
  m.Sample(11, 10'000);  // idle for a second: half of it is forgotten
  EXPECT_NEAR(m.rate(), 500, 1);
  for (int s = 12; s <= 30; ++s) m.Sample(s, 10'000);
  EXPECT_LT(m.rate(), 1);
}

TEST(RateMeterTest, ATotalThatGoesDownRestartsTheInterval) {
  RateMeter m(1.0);
  m.Sample(0, 5000);
  m.Sample(1, 6000);
  double before = m.rate();
  m.Sample(2, 100);  // a volume was removed: no negative rate
  EXPECT_EQ(m.rate(), before);
  m.Sample(3, 1100);
  EXPECT_GT(m.rate(), before);
  m.Sample(3, 2000);  // no time passed: nothing to average
  EXPECT_GT(m.rate(), 0);
}

}  // namespace
}  // namespace ferry::volume
