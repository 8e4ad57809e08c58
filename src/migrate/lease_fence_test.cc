#include "migrate/lease_fence.h"

#include <gtest/gtest.h>

namespace ferry::migrate {
namespace {

TEST(LeaseFence, WritesOnlyWhileTheMarginIsLeft) {
  LeaseFence f(/*held_until_ms=*/10'000, /*margin_ms=*/1'500);
  EXPECT_TRUE(f.Check(8'000, 0).ok());
  EXPECT_FALSE(f.Check(8'500, 0).ok());  // exactly the margin left: no
  Status s = f.Check(9'000, 0);
  EXPECT_EQ(s.code(), ErrorCode::kCancelled);
  EXPECT_NE(s.message().find("1000 ms"), std::string::npos) << s.message();
}

TEST(LeaseFence, ARenewalOrAFresherClaimMovesTheEnd) {
  LeaseFence f(10'000, 1'500);
  EXPECT_FALSE(f.Check(9'000, 0).ok());
  EXPECT_TRUE(f.Check(9'000, /*claimed_until_ms=*/13'000).ok());  // claimed after
  f.Renewed(13'000);
  EXPECT_TRUE(f.Check(11'000, 0).ok());
  f.Renewed(12'000);  // a renewal that started earlier and ended later: never back
  EXPECT_EQ(f.held_until_ms(), 13'000);
  EXPECT_FALSE(f.Check(11'600, 0).ok());
}

}  // namespace
}  // namespace ferry::migrate
