// Small bodies through the proxy with trained dictionaries: stored
// compressed once a dictionary is trained, sent decoded, still readable
// after a restart.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "cache/proxy.h"
#include "cache/proxy_test_util.h"

namespace ferry::cache {
namespace {

std::string Json(int i) {
  return "{\"id\": " + std::to_string(i) + ", \"name\": \"item " + std::to_string(i * 31 % 977) +
         "\", \"tags\": [\"alpha\", \"beta\"], \"price\": {\"amount\": " +
         std::to_string(100 + i % 50) +
         ", \"currency\": \"EUR\"}, \"available\": true, \"updated_at\": \"2026-12-0" +
         std::to_string(1 + i % 7) + "T10:00:00Z\"}";
}

class ProxyTrainedTest : public ProxyFixture {
 protected:
  void SetUp() override {
    ProxyFixture::SetUp();
    options_.encode_behind_max = 0;
    options_.trained.first_samples = 50;
    options_.trained.dictionary_bytes = 4 << 10;
    for (int i = 0; i < 200; ++i) {
      upstream_.answers["/api/" + std::to_string(i)] = {
          200, {{"Content-Type", "application/json"}, {"Cache-Control", "max-age=600"}}, Json(i)};
    }
  }
  std::string Fetch(int i, http::Headers h = {{"Accept-Encoding", "zstd, gzip"}}) {
    ProxyResponse r = proxy().Handle(GetRequest("/api/" + std::to_string(i), std::move(h)));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(HeaderValue(r.headers, "content-encoding"), "");
    return std::string(r.body);
  }
  void WaitTrained(uint64_t n) {
    for (int i = 0; i < 500 && proxy().Metrics().trained_dictionaries < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_EQ(proxy().Metrics().trained_dictionaries, n);
  }
};

TEST_F(ProxyTrainedTest, SmallBodiesAreStoredCompressedOnceTrained) {
  for (int i = 0; i < 50; ++i) EXPECT_EQ(Fetch(i), Json(i));
  WaitTrained(1);
  const uint64_t stored_before = proxy().Metrics().stored_bytes;
  for (int i = 50; i < 150; ++i) EXPECT_EQ(Fetch(i), Json(i));
  MetricsSnapshot m = proxy().Metrics();
  EXPECT_EQ(m.trained_entries, 100u);
  uint64_t logical = 0;
  for (int i = 50; i < 150; ++i) logical += Json(i).size();
  EXPECT_LT((m.stored_bytes - stored_before) * 2, logical)
      << "stored " << m.stored_bytes - stored_before;
  // Hits: sent decoded, to zstd clients too (none has the dictionary).
  for (int i = 50; i < 150; i += 7) EXPECT_EQ(Fetch(i), Json(i));
  ProxyRequest head = GetRequest("/api/60");
  head.method = "HEAD";
  EXPECT_EQ(proxy().Handle(head).head_length.value_or(0), Json(60).size());
  // A lower tier gets the body decoded, not the stored frame.
  ProxyResponse tier = proxy().Handle(GetRequest("/api/61", {{"X-Ferry-Tier", "stored"}}));
  EXPECT_EQ(HeaderValue(tier.headers, "x-ferry-stored"), "");
  EXPECT_EQ(std::string(tier.body), Json(61));
  const int calls = upstream_.calls;

  // After a restart, from disk with the stored dictionary.
  proxy_.reset();
  store_ = OpenTestStore(dir_);
  for (int i = 50; i < 150; i += 9) EXPECT_EQ(Fetch(i), Json(i));
  EXPECT_EQ(upstream_.calls, calls);
  // With trained dictionaries off, such entries are misses, refetched.
  proxy_.reset();
  store_ = OpenTestStore(dir_);
  options_.trained.enabled = false;
  EXPECT_EQ(Fetch(70), Json(70));
  EXPECT_EQ(upstream_.calls, calls + 1);
}

}  // namespace
}  // namespace ferry::cache
