#include "cache/segment_record.h"

#include <gtest/gtest.h>

#include <functional>

#include "cache/meta_codec.h"

namespace ferry::cache {
namespace {

EntryMeta Meta(const std::string& key, uint64_t n) {
  EntryMeta m;
  m.key = key;
  m.status = 200;
  m.logical_length = n;
  m.headers = {{"Content-Type", "text/css"}, {"ETag", "\"v1\""}, {"X-Odd", std::string("\xff\x01", 2)}};
  m.request_time = 1'700'000'000;
  m.response_time = 1'700'000'001;
  return m;
}

TEST(SegmentRecordTest, RoundTripsMetadataAndBody) {
  std::string body = "body { color: red }\n";
  auto rec = EncodeRecord(Meta("http://a/x.css", body.size()), body);
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->size(), 32 + EncodeMeta(Meta("http://a/x.css", body.size())).size() + body.size());
  auto head = ParseRecordHead(*rec);
  ASSERT_TRUE(head.ok());
  EXPECT_TRUE(head->live);
  EXPECT_EQ(head->size(), rec->size());
  auto d = DecodeRecord(*rec);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->body, body);
  EXPECT_EQ(d->meta.key, "http://a/x.css");
  EXPECT_EQ(d->meta.headers, Meta("", 0).headers);
  EXPECT_EQ(d->meta.stored_length, body.size());
  // The metadata alone, from the head and metadata (what a scan reads).
  auto meta = DecodeRecordMeta(*head, std::string_view(*rec).substr(0, kRecordHeadSize + head->meta_length));
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(meta->response_time, 1'700'000'001);
}

TEST(SegmentRecordTest, TheStateByteIsOutsideTheChecksums) {
  auto rec = EncodeRecord(Meta("k", 3), "abc");
  ASSERT_TRUE(rec.ok());
  (*rec)[kRecordStateOffset] = kRecordDead;
  auto d = DecodeRecord(*rec);
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->head.live);
}

// Every kind of damage is found: never a record served with other bytes.
TEST(SegmentRecordTest, DamageIsFound) {
  std::string body(5000, 'x');
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>('a' + i % 26);
  const std::string good = *EncodeRecord(Meta("http://a/big.js", body.size()), body);
  const size_t meta_end = kRecordHeadSize + ParseRecordHead(good)->meta_length;
  struct Case {
    const char* name;
    std::function<void(std::string*)> damage;
    bool head_fails;  // DecodeRecordMeta already refuses it (a scan stops there)
  };
  const Case cases[] = {
      {"torn tail: cut in the body", [](std::string* r) { r->resize(r->size() - 1000); }, false},
      {"torn tail: cut in the checksum", [](std::string* r) { r->resize(r->size() - 3); }, false},
      {"torn tail: cut in the metadata", [&](std::string* r) { r->resize(meta_end - 5); }, true},
      {"torn tail: cut in the head", [](std::string* r) { r->resize(10); }, true},
      {"zeros where the tail was", [](std::string* r) { std::fill(r->begin() + 200, r->end(), '\0'); }, false},
      {"flipped byte in the body", [](std::string* r) { (*r)[r->size() - 100] ^= 0x20; }, false},
      {"flipped byte in the metadata", [&](std::string* r) { (*r)[meta_end - 3] ^= 0x01; }, true},
      {"flipped byte in the body checksum", [](std::string* r) { (*r)[r->size() - 1] ^= 0x80; }, false},
      {"wrong body length", [](std::string* r) { (*r)[12] ^= 0x01; }, true},
      {"wrong metadata length", [](std::string* r) { (*r)[8] ^= 0x02; }, true},
      {"bad magic", [](std::string* r) { (*r)[0] = 'X'; }, true},
      {"nonzero padding", [](std::string* r) { (*r)[6] = 1; }, true},
      {"an extra byte", [](std::string* r) { r->push_back('z'); }, false},
  };
  for (const Case& c : cases) {
    std::string r = good;
    c.damage(&r);
    EXPECT_EQ(DecodeRecord(r).status().code(), ErrorCode::kCorruption) << c.name;
    auto head = ParseRecordHead(r);
    bool head_ok = head.ok() && DecodeRecordMeta(*head, r).ok();
    EXPECT_EQ(!head_ok, c.head_fails) << c.name;
  }
}

TEST(SegmentRecordTest, MetadataOverOneMebibyteIsRefused) {
  EntryMeta m = Meta("k", 0);
  m.headers.emplace_back("X-Huge", std::string(kMaxRecordMeta, 'h'));
  EXPECT_EQ(EncodeRecord(m, "x").status().code(), ErrorCode::kInvalidArgument);
}

TEST(SegmentRecordTest, ARefreshRecordCarriesMetadataAndItsBodysChecksum) {
  EntryMeta m;
  m.key = "k";
  m.logical_length = 5000;
  m.stored_length = 5000;
  auto r = EncodeRefreshRecord(m, 0x1122334455667788ull);
  ASSERT_TRUE(r.ok());
  auto d = DecodeRecord(*r);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(d->head.refresh);
  EXPECT_EQ(d->meta.stored_length, 5000u);  // the body it refers to, not its own 8 bytes
  EXPECT_EQ(d->refers_to, 0x1122334455667788ull);
  // Neither kind passes for the other: the magic is not checksummed, the kind is.
  std::string as_full = *r;
  as_full.replace(0, 4, "FRC1");
  EXPECT_EQ(DecodeRecord(as_full).status().code(), ErrorCode::kCorruption);
  auto full = EncodeRecord(m, std::string(5000, 'x'));
  ASSERT_TRUE(full.ok());
  EXPECT_FALSE(DecodeRecord(*full)->head.refresh);
  std::string as_refresh = *full;
  as_refresh.replace(0, 4, "FRR1");
  EXPECT_EQ(DecodeRecord(as_refresh).status().code(), ErrorCode::kCorruption);
}

}  // namespace
}  // namespace ferry::cache
