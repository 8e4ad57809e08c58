#include "volume/qos.h"

#include <gtest/gtest.h>

namespace ferry::volume {
namespace {

using std::chrono::milliseconds;

TEST(QosTest, Table) {
  struct Case {
    int since_client, since_fetch;
    bool prefetch;
    int want;
  } cases[] = {
      {1000, 0, false, 0},   // idle clients: hydrate at full speed
      {50, 0, false, 0},     // the busy window has passed
      {10, 0, false, 100},   // busy: trickle, one chunk per 100 ms
      {10, 30, false, 70},
      {0, 100, false, 0},    // busy, but the trickle interval has passed
      {0, 500, false, 0},
      {0, 0, true, 0},       // busy, but the prefetch order: what the clients read next
      {10, 30, true, 0},
      {1000, 0, true, 0},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(HydrationPause(milliseconds(c.since_client), milliseconds(c.since_fetch), c.prefetch).count(), c.want)
        << c.since_client << " " << c.since_fetch << " " << c.prefetch;
  }
  QosSettings s{milliseconds(10), milliseconds(1000)};
  EXPECT_EQ(HydrationPause(milliseconds(5), milliseconds(0), false, s).count(), 1000);
  // --busy-window 0: clients never count as busy.
  QosSettings never{milliseconds(0), milliseconds(100)};
  EXPECT_EQ(HydrationPause(milliseconds(0), milliseconds(0), false, never).count(), 0);
}

}  // namespace
}  // namespace ferry::volume
