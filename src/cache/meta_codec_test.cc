#include "cache/meta_codec.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ferry::cache {
namespace {

EntryMeta Browserish() {
  EntryMeta m;
  m.key = "https://www.example.org/static/app.3f9a1c.js";
  m.status = 200;
  m.encoding = StoredEncoding::kZstd;
  m.logical_length = 183'220;
  m.stored_length = 51'002;
  m.request_time = 1'764'000'000;
  m.response_time = 1'764'000'001;
  m.headers = {{"Content-Type", "application/javascript; charset=utf-8"},
               {"Cache-Control", "public, max-age=31536000, immutable"},
               {"ETag", "\"5e1f-61a2b3c4d5e6f\""},
               {"Last-Modified", "Tue, 25 Nov 2025 10:11:12 GMT"},
               {"Date", "Wed, 26 Nov 2025 08:00:01 GMT"},
               {"server", "nginx"},
               {"Vary", "Accept-Encoding"},
               {"X-Served-By", "cache-ams21"},
               {"Expires", "Thu, 01 Dec 1994 16:00:00 GMT"},
               {"Expires", "0"},
               {"X-Latin1", std::string("caf\xe9 \x80\xff", 7)}};
  return m;
}

TEST(MetaCodecTest, RoundTripsEveryByte) {
  EntryMeta m = Browserish();
  auto back = DecodeMeta(EncodeMeta(m));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->key, m.key);
  EXPECT_EQ(back->status, m.status);
  EXPECT_EQ(back->encoding, m.encoding);
  EXPECT_EQ(back->logical_length, m.logical_length);
  EXPECT_EQ(back->stored_length, m.stored_length);
  EXPECT_EQ(back->request_time, m.request_time);
  EXPECT_EQ(back->response_time, m.response_time);
  EXPECT_EQ(back->headers, m.headers);  // names' case, dates and obs-text exactly
}

TEST(MetaCodecTest, DatesThatWouldNotFormatBackAreKeptAsText) {
  EntryMeta m;
  m.headers = {{"Date", "Sun, 6 Nov 1994 08:49:37 GMT"},  // one-digit day: not IMF-fixdate
               {"Last-Modified", "sun, 06 Nov 1994 08:49:37 GMT"},
               {"Expires", "Sunday, 06-Nov-94 08:49:37 GMT"}};
  auto back = DecodeMeta(EncodeMeta(m));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->headers, m.headers);
}

TEST(MetaCodecTest, FarSmallerThanTheJsonOfEntryFiles) {
  EntryMeta m = Browserish();
  nlohmann::json headers = nlohmann::json::array();
  for (const auto& [k, v] : m.headers) headers.push_back({k, std::string(v.size(), 'v')});
  std::string json = nlohmann::json{{"key", m.key}, {"status", 200}, {"headers", headers}, {"encoding", "zstd"},
                                    {"logical_length", m.logical_length}, {"stored_length", m.stored_length},
                                    {"request_time", m.request_time}, {"response_time", m.response_time}}
                         .dump();
  size_t compact = EncodeMeta(m).size();
  EXPECT_LT(compact * 10, json.size() * 7) << compact << " vs " << json.size();
}

TEST(MetaCodecTest, DamageIsAnErrorNotAGuess) {
  std::string good = EncodeMeta(Browserish());
  EXPECT_FALSE(DecodeMeta("").ok());
  EXPECT_FALSE(DecodeMeta(good.substr(0, good.size() - 1)).ok());
  EXPECT_FALSE(DecodeMeta(good + "x").ok());
  std::string v2 = good;
  v2[0] = 2;
  EXPECT_FALSE(DecodeMeta(v2).ok());
  for (size_t cut = 0; cut < good.size(); ++cut) {
    EXPECT_EQ(DecodeMeta(good.substr(0, cut)).status().code(), ErrorCode::kCorruption) << cut;
  }
}

}  // namespace
}  // namespace ferry::cache
