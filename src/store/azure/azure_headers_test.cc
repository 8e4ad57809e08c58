#include "store/azure/azure_headers.h"

#include <gtest/gtest.h>

#include "crypto/digest.h"

namespace ferry::azure {
namespace {

TEST(AzureHeaders, MetadataNamesAreEscapedReversibly) {
  struct Case {
    const char* name;
    const char* encoded;
  } cases[] = {
      {"color", "color"},
      {"owner-id", "owner_x2d_id"},
      {"ferry-md5", "ferry_x2d_md5"},
      {"a_b", "a_x5f_b"},
      {"9lives", "_x39_lives"},
      {"v2", "v2"},
      {"dot.name", "dot_x2e_name"},
      {"_x2d_", "_x5f_x2d_x5f_"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(EncodeMetadataName(c.name), c.encoded) << c.name;
    EXPECT_EQ(DecodeMetadataName(c.encoded), c.name) << c.encoded;
  }
  // Names other tools wrote read as they are.
  EXPECT_EQ(DecodeMetadataName("my_key"), "my_key");
  EXPECT_EQ(DecodeMetadataName("a_xzz_b"), "a_xzz_b");
  EXPECT_EQ(DecodeMetadataName("trailing_x2"), "trailing_x2");
}

TEST(AzureHeaders, PutHeaders) {
  ObjectHeaders h;
  h.content_type = "text/plain";
  h.cache_control = "no-cache";
  h.expires = "Thu, 01 Dec 2033 16:00:00 GMT";
  h.user = {{"owner-id", "42"}};
  http::Headers out;
  AddBlobHeaders(h, false, &out);
  EXPECT_EQ(out, (http::Headers{{"x-ms-blob-content-type", "text/plain"},
                                {"x-ms-blob-cache-control", "no-cache"},
                                {"x-ms-meta-owner_x2d_id", "42"}}));
  http::Headers all;
  AddBlobHeaders(ObjectHeaders{}, true, &all);
  EXPECT_EQ(all.size(), 5u) << "Set Blob Properties clears what is not given";
}

TEST(AzureHeaders, InfoFromAnswers) {
  http::Response r;
  r.status = 206;
  r.headers = {{"ETag", "\"0x8D\""},
               {"Content-Length", "10"},
               {"Content-Range", "bytes 10-19/100"},
               {"Content-MD5", Base64Encode(Md5("range only"))},
               {"x-ms-blob-content-md5", Base64Encode(Md5("whole"))},
               {"Content-Type", "image/png"},
               {"Last-Modified", "Fri, 26 Jun 2015 23:39:12 GMT"},
               {"x-ms-meta-owner_x2d_id", "42"},
               {"X-MS-META-Color", "blue"}};
  ObjectInfo info = InfoFromBlobResponse("k", r);
  EXPECT_EQ(info.size, 100u);
  EXPECT_EQ(info.etag, "0x8D");
  EXPECT_FALSE(info.etag_is_md5);
  EXPECT_EQ(info.md5_hex, HexLower(Md5("whole"))) << "a range's own MD5 is not the blob's";
  EXPECT_EQ(info.headers.content_type, "image/png");
  EXPECT_EQ(info.headers.user, (std::map<std::string, std::string>{{"owner-id", "42"},
                                                                    {"color", "blue"}}));
  r.status = 200;
  r.headers = {{"Content-Length", "5"}, {"Content-MD5", Base64Encode(Md5("hello"))}};
  info = InfoFromBlobResponse("k", r);
  EXPECT_EQ(info.size, 5u);
  EXPECT_EQ(info.md5_hex, HexLower(Md5("hello")));
}

}  // namespace
}  // namespace ferry::azure
