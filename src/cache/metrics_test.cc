#include "cache/metrics.h"

#include <gtest/gtest.h>

namespace ferry::cache {
namespace {

TEST(MetricsTest, RendersCountersGaugesAndRatios) {
  MetricsSnapshot m;
  m.hits = 7;
  m.misses = 3;
  m.coalesced = 2;
  m.logical_bytes = 3000;
  m.stored_bytes = 1000;
  m.encode_ns = 500;
  m.encode_bytes = 250;
  m.disk_entries = 4;
  m.requests_h1 = 5;
  m.requests_h2 = 6;
  m.disk_logical_bytes = 9000;
  m.disk_allocated_bytes = 4096;
  m.torn = 1;
  m.torn_bytes = 77;
  std::string text = RenderMetrics(m);
  EXPECT_NE(text.find("ferry_cache_http_requests_total{protocol=\"h1\"} 5\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ferry_cache_http_requests_total{protocol=\"h2\"} 6\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ferry_cache_requests_total{result=\"hit\"} 7\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ferry_cache_requests_total{result=\"miss\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE ferry_cache_coalesced_total counter\nferry_cache_coalesced_total 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("ferry_cache_compression_ratio 3\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE ferry_cache_encode_cpu_seconds_total counter\nferry_cache_encode_cpu_seconds_total 5e-07\n"),
            std::string::npos);
  EXPECT_NE(text.find("ferry_cache_decode_cpu_seconds_total 0\n"), std::string::npos);
  EXPECT_NE(text.find("ferry_cache_disk_entries 4\n"), std::string::npos);
  EXPECT_NE(text.find("ferry_cache_disk_allocated_bytes 4096\n"), std::string::npos);
  EXPECT_NE(text.find("ferry_cache_disk_logical_per_allocated 2.197265625\n"), std::string::npos);
  EXPECT_NE(text.find("ferry_cache_torn_records_total 1\n"), std::string::npos);
  EXPECT_NE(text.find("ferry_cache_torn_bytes_total 77\n"), std::string::npos);
  // Every sample line is NAME[{labels}] VALUE.
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    ASSERT_NE(nl, std::string::npos);
    std::string line = text.substr(at, nl - at);
    if (line[0] != '#') {
      EXPECT_EQ(line.rfind("ferry_cache_", 0), 0u) << line;
    }
    at = nl + 1;
  }
}

}  // namespace
}  // namespace ferry::cache
