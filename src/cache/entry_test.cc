#include "cache/entry.h"

#include <gtest/gtest.h>

#include "codec/zstd_codec.h"

namespace ferry::cache {
namespace {

EntryMeta Meta() {
  EntryMeta m;
  m.key = "http://origin.test/a/b.html";
  m.status = 200;
  m.headers = {{"Content-Type", "text/html"}, {"ETag", "\"v1\""}, {"X-Dup", "1"}, {"X-Dup", "2"}};
  m.request_time = 1'764'700'000;
  m.response_time = 1'764'700'001;
  return m;
}

TEST(CacheEntryTest, RoundTripsMetadataAndBody) {
  std::string text(20'000, 'a');
  std::string z = *codec::ZstdCompress(text);
  EntryMeta m = Meta();
  m.encoding = StoredEncoding::kZstd;
  m.logical_length = text.size();
  std::string file = EncodeEntry(m, z);
  auto e = DecodeEntry(file);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->meta.key, m.key);
  EXPECT_EQ(e->meta.status, 200);
  EXPECT_EQ(e->meta.headers, m.headers);
  EXPECT_EQ(e->meta.encoding, StoredEncoding::kZstd);
  EXPECT_EQ(e->meta.logical_length, text.size());
  EXPECT_EQ(e->meta.stored_length, z.size());
  EXPECT_EQ(e->meta.request_time, m.request_time);
  EXPECT_EQ(e->meta.response_time, m.response_time);
  EXPECT_EQ(e->body, z);
  EXPECT_EQ(*codec::ZstdDecompress(e->body), text);

  EntryMeta empty = Meta();
  auto e2 = DecodeEntry(EncodeEntry(empty, ""));
  ASSERT_TRUE(e2.ok()) << e2.status().ToString();
  EXPECT_EQ(e2->body, "");
}

// Every single-byte change and every truncation is caught, and none crashes.
TEST(CacheEntryTest, AnyDamageIsFound) {
  EntryMeta m = Meta();
  m.logical_length = 300;
  std::string file = EncodeEntry(m, std::string(300, 'x'));
  for (size_t i = 0; i < file.size(); ++i) {
    std::string bad = file;
    bad[i] ^= 0x04;
    auto e = DecodeEntry(bad);
    ASSERT_FALSE(e.ok()) << "flip at " << i;
    EXPECT_EQ(e.status().code(), ErrorCode::kCorruption);
  }
  for (size_t n = 0; n < file.size(); ++n) {
    EXPECT_FALSE(DecodeEntry(std::string_view(file).substr(0, n)).ok()) << "cut at " << n;
  }
  EXPECT_FALSE(DecodeEntry(file + "x").ok()) << "a byte too many";
}

TEST(CacheEntryTest, ErrorsSayWhatWasWrong) {
  auto e = DecodeEntry("GARBAGE GARBAGE GARBAGE GARBAGE GARBAGE GARBAGE GARBAGE");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("bad magic"), std::string::npos) << e.status().ToString();
  EntryMeta m = Meta();
  m.logical_length = 3;
  std::string file = EncodeEntry(m, "abc");
  file[file.size() - 1] ^= 1;
  e = DecodeEntry(file);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("checksum"), std::string::npos) << e.status().ToString();
  m.logical_length = 99;  // identity body must be its logical length
  e = DecodeEntry(EncodeEntry(m, "abc"));
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("logical length"), std::string::npos);
}

TEST(EntryTest, AnyBytesInKeyAndHeadersRoundTrip) {
  EntryMeta m;
  m.key = std::string("http://o/p\x9d\xff\x80\x01", 14);
  m.headers = {{"X-Latin", "caf\xe9 \xc3\xa9"}, {std::string("N\0", 2), "\x7f"}};
  m.logical_length = 3;
  auto d = DecodeEntry(EncodeEntry(m, "abc"));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->meta.key, m.key);
  EXPECT_EQ(d->meta.headers, m.headers);
}

}  // namespace
}  // namespace ferry::cache
