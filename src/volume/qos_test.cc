#include "volume/qos.h"

#include <gtest/gtest.h>

namespace ferry::volume {
namespace {

using std::chrono::milliseconds;

TEST(QosTest, Table) {
  struct Case {
    int since_client, since_fetch, want;
  } cases[] = {
      {1000, 0, 0},   // idle clients: hydrate at full speed
      {50, 0, 0},     // the busy window has passed
      {10, 0, 100},   // busy: trickle, one chunk per 100 ms
      {10, 30, 70},
      {0, 100, 0},    // busy, but the trickle interval has passed
      {0, 500, 0},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(HydrationPause(milliseconds(c.since_client), milliseconds(c.since_fetch)).count(), c.want)
        << c.since_client << " " << c.since_fetch;
  }
  QosSettings s{milliseconds(10), milliseconds(1000)};
  EXPECT_EQ(HydrationPause(milliseconds(5), milliseconds(0), s).count(), 1000);
}

}  // namespace
}  // namespace ferry::volume
