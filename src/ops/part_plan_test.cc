#include "ops/part_plan.h"

#include <gtest/gtest.h>

#include "base/units.h"

namespace ferry {
namespace {


TEST(PartPlan, Table) {
  PartPolicy p;  // 64 MiB threshold, 16 MiB parts, 5 MiB min, 10000 max
  struct Case {
    uint64_t size;
    bool multipart;
    uint64_t part_size;
    int parts;
  } cases[] = {
      {0, false, 0, 1},
      {1, false, 1, 1},
      {64 * kMiB - 1, false, 64 * kMiB - 1, 1},
      {64 * kMiB, true, 16 * kMiB, 4},
      {64 * kMiB + 1, true, 16 * kMiB, 5},
      {1 * kGiB, true, 16 * kMiB, 64},
      // 16 MiB x 10000 = 156.25 GiB: beyond that the part size grows.
      {10000 * 16 * kMiB, true, 16 * kMiB, 10000},
      {10000 * 16 * kMiB + 1, true, 17 * kMiB, 9412},
      {5000 * kGiB, true, 512 * kMiB, 10000},
  };
  for (const auto& c : cases) {
    PartPlan plan = PlanParts(c.size, p);
    EXPECT_EQ(plan.multipart, c.multipart) << c.size;
    EXPECT_EQ(plan.part_size, c.part_size) << c.size;
    EXPECT_EQ(plan.parts, c.parts) << c.size;
    if (plan.multipart) {
      EXPECT_LE(plan.parts, p.max_parts);
      EXPECT_GE(plan.part_size * plan.parts, c.size);
      EXPECT_LT(plan.part_size * (plan.parts - 1), c.size);
    }
  }
}

TEST(PartPlan, PreferredSizeIsClampedToStoreLimits) {
  PartPolicy p;
  p.threshold = 10 * kMiB;
  p.part_size = 1 * kMiB;  // below S3's 5 MiB minimum
  PartPlan plan = PlanParts(20 * kMiB, p);
  EXPECT_EQ(plan.part_size, 5 * kMiB);
  EXPECT_EQ(plan.parts, 4);
}

}  // namespace
}  // namespace ferry
