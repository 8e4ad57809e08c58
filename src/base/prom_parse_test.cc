// ParsePromText reads what PromText writes and what other exporters write:
// labels with escapes, special values, comments; malformed lines skipped.
#include "base/prom_parse.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/prom_text.h"

namespace ferry {
namespace {

TEST(PromParseTest, SamplesWithLabelsEscapesAndSpecialValues) {
  const auto s = ParsePromText(
      "# HELP x_total Things.\n"
      "# TYPE x_total counter\n"
      "x_total{result=\"hit\"} 7\n"
      "x_total{result=\"miss\",path=\"a\\\"b\\\\c\\nd\"} 3 1700000000000\n"
      "up 1\r\n"
      "inf_gauge +Inf\n"
      "broken{result=\"hit\" 4\n"
      "novalue\n"
      "bad_value 12abc\n");
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].name, "x_total");
  EXPECT_EQ(s[0].labels.at("result"), "hit");
  EXPECT_EQ(s[1].labels.at("path"), "a\"b\\c\nd");
  EXPECT_EQ(s[1].value, 3);
  EXPECT_EQ(s[2].name, "up");
  EXPECT_TRUE(std::isinf(s[3].value));
  EXPECT_EQ(PromSum(s, "x_total"), 10);
  EXPECT_EQ(PromSum(s, "x_total", "result", "miss"), 3);
  EXPECT_EQ(PromSum(s, "x_total", "result", "stale"), 0);
  EXPECT_EQ(PromSum(s, "nothing"), 0);
}

TEST(PromParseTest, ReadsBackWhatPromTextWrites) {
  PromText t;
  t.Family("ferry_things_total", "counter", "Things.");
  t.Sample(5, {{"kind", "a b"}});
  t.Sample(2.5, {{"kind", "q\"uote"}});
  const auto s = ParsePromText(t.Take());
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].labels.at("kind"), "a b");
  EXPECT_EQ(s[1].labels.at("kind"), "q\"uote");
  EXPECT_EQ(PromSum(s, "ferry_things_total"), 7.5);
}

}  // namespace
}  // namespace ferry
