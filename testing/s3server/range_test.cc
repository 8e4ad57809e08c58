#include "range.h"

#include <gtest/gtest.h>

namespace ferry::s3server {
namespace {

using Kind = RangeSpec::Kind;

struct Case {
  const char* header;
  uint64_t size;
  Kind kind;
  uint64_t first, last;
};

TEST(ParseRange, Table) {
  const Case cases[] = {
      {"", 100, Kind::kWhole, 0, 0},
      {"bytes=0-9", 100, Kind::kPartial, 0, 9},
      {"bytes=10-", 100, Kind::kPartial, 10, 99},
      {"bytes=-10", 100, Kind::kPartial, 90, 99},
      {"bytes=-1000", 100, Kind::kPartial, 0, 99},   // suffix longer than object
      {"bytes=50-1000", 100, Kind::kPartial, 50, 99},  // end clamped
      {"bytes=99-99", 100, Kind::kPartial, 99, 99},
      {"bytes=100-", 100, Kind::kUnsatisfiable, 0, 0},
      {"bytes=100-200", 100, Kind::kUnsatisfiable, 0, 0},
      {"bytes=-0", 100, Kind::kUnsatisfiable, 0, 0},
      {"bytes=0-", 0, Kind::kUnsatisfiable, 0, 0},
      {"bytes=-5", 0, Kind::kUnsatisfiable, 0, 0},
      {"bytes=9-0", 100, Kind::kWhole, 0, 0},     // reversed: ignored
      {"bytes=0-1,5-6", 100, Kind::kWhole, 0, 0},  // multi-range: ignored
      {"items=0-1", 100, Kind::kWhole, 0, 0},
      {"bytes=abc", 100, Kind::kWhole, 0, 0},
      {"bytes=1-x", 100, Kind::kWhole, 0, 0},
      {" bytes=1-2 ", 100, Kind::kPartial, 1, 2},
  };
  for (const Case& c : cases) {
    RangeSpec r = ParseRange(c.header, c.size);
    EXPECT_EQ(r.kind, c.kind) << c.header << " size " << c.size;
    if (r.kind == Kind::kPartial) {
      EXPECT_EQ(r.first, c.first) << c.header;
      EXPECT_EQ(r.last, c.last) << c.header;
    }
  }
}

TEST(ParseRange, LargeObject) {
  uint64_t size = 5ull << 30;
  RangeSpec r = ParseRange("bytes=4294967296-", size);
  ASSERT_EQ(r.kind, Kind::kPartial);
  EXPECT_EQ(r.first, 4294967296ull);
  EXPECT_EQ(r.length(), size - 4294967296ull);
}

}  // namespace
}  // namespace ferry::s3server
