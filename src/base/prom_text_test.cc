#include "base/prom_text.h"

#include <gtest/gtest.h>

namespace ferry {
namespace {

TEST(PromTextTest, FamiliesSamplesAndEscapedLabels) {
  PromText t;
  t.Family("ferry_x_requests_total", "counter", "Requests,\nby result.")
      .Sample(7, {{"result", "hit"}})
      .Sample(0.5, {{"result", "a \"q\" \\ b\nc"}, {"pool", "/p"}});
  t.Family("ferry_x_open", "gauge", "Open.").Sample(3);
  EXPECT_EQ(t.Take(),
            "# HELP ferry_x_requests_total Requests, by result.\n"
            "# TYPE ferry_x_requests_total counter\n"
            "ferry_x_requests_total{result=\"hit\"} 7\n"
            "ferry_x_requests_total{result=\"a \\\"q\\\" \\\\ b\\nc\",pool=\"/p\"} 0.5\n"
            "# HELP ferry_x_open Open.\n# TYPE ferry_x_open gauge\nferry_x_open 3\n");
}

TEST(PromTextTest, HistogramBucketsAreCumulative) {
  PromText t;
  t.Histogram("ferry_x_seconds", "Latency.", {0.001, 0.01}, {2, 3}, 1, 4.5);
  EXPECT_EQ(t.Take(),
            "# HELP ferry_x_seconds Latency.\n# TYPE ferry_x_seconds histogram\n"
            "ferry_x_seconds_bucket{le=\"0.001\"} 2\n"
            "ferry_x_seconds_bucket{le=\"0.01\"} 5\n"
            "ferry_x_seconds_bucket{le=\"+Inf\"} 6\n"
            "ferry_x_seconds_sum 4.5\n"
            "ferry_x_seconds_count 6\n");
}

}  // namespace
}  // namespace ferry
