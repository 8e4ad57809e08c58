#include "http/date.h"

#include <gtest/gtest.h>

namespace ferry::http {
namespace {

using namespace std::chrono;

TEST(HttpDateTest, ParsesTheThreeFormats) {
  SysSeconds want = sys_days(1994y / November / 6) + 8h + 49min + 37s;
  EXPECT_EQ(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT"), want);
  EXPECT_EQ(ParseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT"), want);
  EXPECT_EQ(ParseHttpDate("Sun Nov  6 08:49:37 1994"), want);
}

TEST(HttpDateTest, RejectsWhatIsNotADate) {
  for (const char* bad : {"", "0", "-1", "Sun, 06 Nov 1994 08:49:37", "Sun, 31 Feb 2024 00:00:00 GMT",
                          "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT",
                          "Sun, 06 Nov 1994 08:49:37 GMT trailing"}) {
    EXPECT_EQ(ParseHttpDate(bad), std::nullopt) << bad;
  }
}

TEST(HttpDateTest, FormatsImfFixdateAndRoundTrips) {
  SysSeconds t = sys_days(2026y / December / 2) + 21h + 5min + 9s;
  EXPECT_EQ(FormatHttpDate(t), "Wed, 02 Dec 2026 21:05:09 GMT");
  EXPECT_EQ(ParseHttpDate(FormatHttpDate(t)), t);
  EXPECT_EQ(FormatHttpDate(SysSeconds{}), "Thu, 01 Jan 1970 00:00:00 GMT");
}

}  // namespace
}  // namespace ferry::http
