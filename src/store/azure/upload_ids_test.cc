#include "store/azure/upload_ids.h"

#include <gtest/gtest.h>

namespace ferry::azure {
namespace {

TEST(UploadIds, NonceRecordsTheCreateTime) {
  TimePoint t{std::chrono::milliseconds(1'700'000'000'123)};
  std::string nonce = NewUploadNonce(t, 0xabcdef);
  EXPECT_EQ(nonce, "018bcfe5687b000000abcdef");
  EXPECT_EQ(NonceTime(nonce), t);
}

TEST(UploadIds, IdsCarryTheHeaders) {
  UploadId id;
  id.nonce = "018bcfe56a7b000000abcdef";
  EXPECT_EQ(FormatUploadId(id), id.nonce) << "no headers, no suffix";
  id.headers.content_type = "text/plain";
  id.headers.user = {{"ferry-md5", "00ff"}, {"note", "a/b+c=d"}};
  std::string text = FormatUploadId(id);
  EXPECT_EQ(text.find_first_of("+/= "), std::string::npos) << text;
  auto back = ParseUploadId(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->nonce, id.nonce);
  EXPECT_EQ(back->headers, id.headers);
}

TEST(UploadIds, ForeignIdsAreUnknownUploads) {
  for (const char* bad : {"", "no-such-upload-id", "018bcfe56a7b000000abcdeg",
                          "018bcfe56a7b000000abcdef.!!!", "018bcfe56a7b000000abcdef.e30",
                          "018bcfe56a7b000000abcdef.WzFd"}) {
    auto r = ParseUploadId(bad);
    if (std::string(bad) == "018bcfe56a7b000000abcdef.e30") {  // "{}": an empty header set
      EXPECT_TRUE(r.ok());
      continue;
    }
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), ErrorCode::kNotFound) << bad;
  }
}

TEST(UploadIds, BlockIdsHaveOneLengthAndParseBack) {
  const std::string nonce = "018bcfe56a7b000000abcdef";
  EXPECT_EQ(BlockId(nonce, 1), "ferry-018bcfe56a7b000000abcdef-00001");
  for (int part : {kMarkerPart, 1, 42, 10000, kTombstonePart}) {
    std::string id = BlockId(nonce, part);
    EXPECT_EQ(id.size(), 36u);
    std::string n;
    int p = -1;
    ASSERT_TRUE(ParseBlockId(id, &n, &p)) << id;
    EXPECT_EQ(n, nonce);
    EXPECT_EQ(p, part);
  }
  std::string n;
  int p = 0;
  EXPECT_FALSE(ParseBlockId("block-000001", &n, &p));
  EXPECT_FALSE(ParseBlockId("ferry-018bcfe56a7b000000abcdeX-00001", &n, &p));
  EXPECT_FALSE(ParseBlockId("ferry-018bcfe56a7b000000abcdef-0000x", &n, &p));
}

}  // namespace
}  // namespace ferry::azure
