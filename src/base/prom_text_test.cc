#include "base/prom_text.h"

#include <gtest/gtest.h>

#include "base/latency_histogram.h"

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
  t.Family("ferry_x_seconds", "histogram", "Latency.").Buckets({0.001, 0.01}, {2, 3}, 1, 4.5, {{"op", "get"}});
  EXPECT_EQ(t.Take(),
            "# HELP ferry_x_seconds Latency.\n# TYPE ferry_x_seconds histogram\n"
            "ferry_x_seconds_bucket{op=\"get\",le=\"0.001\"} 2\n"
            "ferry_x_seconds_bucket{op=\"get\",le=\"0.01\"} 5\n"
            "ferry_x_seconds_bucket{op=\"get\",le=\"+Inf\"} 6\n"
            "ferry_x_seconds_sum{op=\"get\"} 4.5\n"
            "ferry_x_seconds_count{op=\"get\"} 6\n");
}

TEST(PromTextTest, ALatencyHistogramRendersInItsOwnBounds) {
  LatencyHistogram h;
  h.Observe(std::chrono::milliseconds(3));  // <= 0.005
  h.Observe(std::chrono::seconds(10));      // above every bound
  PromText t;
  t.Family("ferry_x_seconds", "histogram", "Latency.").Buckets(h.Snap());
  const std::string text = t.Take();
  EXPECT_NE(text.find("ferry_x_seconds_bucket{le=\"0.0025\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ferry_x_seconds_bucket{le=\"0.005\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ferry_x_seconds_bucket{le=\"2.5\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ferry_x_seconds_bucket{le=\"+Inf\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ferry_x_seconds_count 2\n"), std::string::npos) << text;
}

TEST(LatencyHistogramTest, ObservationsLandInTheirBucket) {
  LatencyHistogram h;
  h.Observe(std::chrono::microseconds(50));    // <= 0.0001
  h.Observe(std::chrono::microseconds(100));   // == 0.0001: that bucket too
  h.Observe(std::chrono::milliseconds(3));     // <= 0.005
  h.Observe(std::chrono::seconds(10));         // above every bound
  auto s = h.Snap();
  EXPECT_EQ(s.counts[0], 2u);
  EXPECT_EQ(s.counts[5], 1u);
  EXPECT_EQ(s.overflow, 1u);
  EXPECT_EQ(s.count(), 4u);
  EXPECT_DOUBLE_EQ(s.sum, 10.00315);
}

}  // namespace
}  // namespace ferry
