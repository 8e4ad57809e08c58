#include "base/unix_time.h"

#include <gtest/gtest.h>

namespace ferry {
namespace {

TEST(UnixTime, Rfc3339Utc) {
  struct Case {
    int64_t ms;
    const char* want;
  } cases[] = {
      {0, "1970-01-01T00:00:00Z"},
      {999, "1970-01-01T00:00:00Z"},  // milliseconds are dropped, not rounded
      {1'700'000'000'000, "2023-11-14T22:13:20Z"},
      {1'700'000'000'999, "2023-11-14T22:13:20Z"},
      {951'782'400'000, "2000-02-29T00:00:00Z"},  // a leap day
  };
  for (const Case& c : cases) EXPECT_EQ(Rfc3339Utc(c.ms), c.want) << c.ms;
}

TEST(UnixTime, UnixMsOfATimePoint) {
  std::chrono::system_clock::time_point t{std::chrono::milliseconds(1'700'000'000'123)};
  EXPECT_EQ(UnixMs(t), 1'700'000'000'123);
}

}  // namespace
}  // namespace ferry
