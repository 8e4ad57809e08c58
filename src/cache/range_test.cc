#include "cache/range.h"

#include <gtest/gtest.h>

namespace ferry::cache {
namespace {

using Kind = RangeDecision::Kind;

TEST(RangeTest, Table) {
  struct Case {
    const char* range;
    uint64_t length;
    Kind kind;
    uint64_t first, last;
  } cases[] = {
      {"", 100, Kind::kWhole, 0, 0},
      {"bytes=0-9", 100, Kind::kPartial, 0, 9},
      {"bytes=10-", 100, Kind::kPartial, 10, 99},
      {"bytes=-10", 100, Kind::kPartial, 90, 99},
      {"bytes=-1000", 100, Kind::kPartial, 0, 99},  // suffix longer than the body: all of it
      {"bytes=90-1000", 100, Kind::kPartial, 90, 99},
      {"Bytes = 5-5", 100, Kind::kPartial, 5, 5},
      {"bytes=99-99", 100, Kind::kPartial, 99, 99},
      {"bytes=100-", 100, Kind::kUnsatisfiable, 0, 0},
      {"bytes=100-200", 100, Kind::kUnsatisfiable, 0, 0},
      {"bytes=-0", 100, Kind::kUnsatisfiable, 0, 0},
      {"bytes=0-", 0, Kind::kUnsatisfiable, 0, 0},
      {"bytes=-5", 0, Kind::kUnsatisfiable, 0, 0},
      // Ignored: the whole representation is sent.
      {"bytes=9-0", 100, Kind::kWhole, 0, 0},
      {"bytes=0-1,5-6", 100, Kind::kWhole, 0, 0},
      {"items=0-9", 100, Kind::kWhole, 0, 0},
      {"bytes=a-9", 100, Kind::kWhole, 0, 0},
      {"bytes=-", 100, Kind::kWhole, 0, 0},
      {"bytes=+1-2", 100, Kind::kWhole, 0, 0},
      {"bytes 0-9", 100, Kind::kWhole, 0, 0},
      {"bytes=99999999999999999999-", 100, Kind::kWhole, 0, 0},
  };
  for (const Case& c : cases) {
    RangeDecision d = DecideRange(c.range, "", "\"e\"", "", c.length);
    EXPECT_EQ(d.kind, c.kind) << c.range;
    if (c.kind == Kind::kPartial) {
      EXPECT_EQ(d.first, c.first) << c.range;
      EXPECT_EQ(d.last, c.last) << c.range;
    }
  }
}

TEST(RangeTest, IfRangeNeedsAStrongMatch) {
  const char* lm = "Tue, 01 Dec 2026 10:00:00 GMT";
  auto kind = [&](const char* if_range, const char* etag) {
    return DecideRange("bytes=0-0", if_range, etag, lm, 10).kind;
  };
  EXPECT_EQ(kind("\"e\"", "\"e\""), Kind::kPartial);
  EXPECT_EQ(kind("\"f\"", "\"e\""), Kind::kWhole);
  EXPECT_EQ(kind("W/\"e\"", "W/\"e\""), Kind::kWhole);  // weak tags never match
  EXPECT_EQ(kind("\"e\"", "W/\"e\""), Kind::kWhole);
  EXPECT_EQ(kind(lm, "\"e\""), Kind::kPartial);
  EXPECT_EQ(kind("Tue, 01 Dec 2026 10:00:01 GMT", "\"e\""), Kind::kWhole);
  EXPECT_EQ(kind("not a date", "\"e\""), Kind::kWhole);
  // A failed If-Range sends the whole body even for an unsatisfiable range.
  EXPECT_EQ(DecideRange("bytes=50-", "\"f\"", "\"e\"", "", 10).kind, Kind::kWhole);
}

}  // namespace
}  // namespace ferry::cache
