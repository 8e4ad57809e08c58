// DashboardSampler against a real HTTP server standing in for a volume
// daemon and a cache: the volumes and their history, the cache's hit ratio,
// density and bytes by encoding from its Prometheus text; a source that
// stops answering shows its error and keeps the last figures; bad URLs are
// refused up front.
#include "cli/dashboard_sampler.h"

#include <gtest/gtest.h>

#include <atomic>

#include "base/test_temp_dir.h"
#include "http/api_server.h"
#include "state/state_store.h"

namespace ferry::cli {
namespace {

using json = nlohmann::json;

TEST(DashboardSamplerTest, VolumesAndCacheFiguresFromTheirSources) {
  TestTempDir dir;
  auto store = state::OpenSqliteStateStore(dir / "state.db");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  std::atomic<int> hydrated{3};
  http::ApiServer fake("127.0.0.1:0", [&](const http::ServerRequest& r) -> http::ApiResponse {
    if (r.target == "/volumes") {
      json v = json::array({{{"name", "vm1"},
                             {"state", "hydrating"},
                             {"hydrated", hydrated.load()},
                             {"chunks", 10},
                             {"triggers", 2},
                             {"bytes_from_origin", 3000},
                             {"bytes_from_cache", 0},
                             {"from", "repo/snap"},
                             {"pool", "/p"}}});
      return {200, "application/json", v.dump()};
    }
    if (r.target == "/.well-known/metrics") {
      return {200, "text/plain",
              "# TYPE ferry_cache_requests_total counter\n"
              "ferry_cache_requests_total{result=\"hit\"} 30\n"
              "ferry_cache_requests_total{result=\"miss\"} 10\n"
              "ferry_cache_disk_logical_bytes 3000\n"
              "ferry_cache_disk_allocated_bytes 1000\n"
              "ferry_cache_disk_entries 12\n"
              "ferry_cache_response_bytes_total{encoding=\"zstd\"} 500\n"
              "ferry_cache_response_bytes_total{encoding=\"identity\"} 1500\n"};
    }
    return {404, "text/plain", "no"};
  });
  ASSERT_TRUE(fake.Start().ok());
  const std::string at = "127.0.0.1:" + std::to_string(fake.port());
  DashboardSources src;
  src.volume_api = at;
  src.cache_metrics = "http://" + at + "/.well-known/metrics";
  src.interval_ms = 1000;
  auto s = DashboardSampler::Make(**store, src);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  (*s)->SampleNow(1'000);
  hydrated = 5;
  (*s)->SampleNow(2'000);
  json o = json::parse((*s)->OverviewJson());
  ASSERT_TRUE(o.contains("volumes")) << o;
  EXPECT_FALSE(o["volumes"].contains("error")) << o;
  ASSERT_EQ(o["volumes"]["list"].size(), 1u);
  EXPECT_EQ(o["volumes"]["list"][0]["name"], "vm1");
  EXPECT_EQ(o["volumes"]["list"][0]["hydrated"], 5);
  ASSERT_EQ(o["volumes"]["history"].size(), 2u);
  EXPECT_EQ(o["volumes"]["history"][1], json::array({2000, 5, 3000, 0}));
  EXPECT_DOUBLE_EQ(o["cache"]["hit_ratio"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(o["cache"]["logical_per_allocated"].get<double>(), 3.0);
  EXPECT_EQ(o["cache"]["entries"], 12);
  EXPECT_EQ(o["cache"]["response_bytes"]["zstd"], 500);
  EXPECT_EQ(o["cache"]["history"].size(), 2u);

  // The sources go away: errors shown, the last figures kept.
  fake.Stop();
  (*s)->SampleNow(3'000);
  o = json::parse((*s)->OverviewJson());
  EXPECT_TRUE(o["volumes"].contains("error")) << o;
  EXPECT_TRUE(o["cache"].contains("error")) << o;
  EXPECT_EQ(o["volumes"]["list"].size(), 1u);
  EXPECT_DOUBLE_EQ(o["cache"]["hit_ratio"].get<double>(), 0.75);
}

TEST(DashboardSamplerTest, WithoutSourcesOnlyThePoolAndBadUrlsRefused) {
  TestTempDir dir;
  auto store = state::OpenSqliteStateStore(dir / "state.db");
  ASSERT_TRUE(store.ok());
  auto s = DashboardSampler::Make(**store, {});
  ASSERT_TRUE(s.ok());
  (*s)->SampleNow(1'000);
  json o = json::parse((*s)->OverviewJson());
  EXPECT_TRUE(o.contains("pool"));
  EXPECT_FALSE(o.contains("volumes"));
  EXPECT_FALSE(o.contains("cache"));
  DashboardSources bad;
  bad.cache_metrics = "ftp://x/metrics";
  auto b = DashboardSampler::Make(**store, bad);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("--cache-metrics"), std::string::npos);
}

}  // namespace
}  // namespace ferry::cli
