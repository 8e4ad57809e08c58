#include "gateway/s3_xml.h"

#include <gtest/gtest.h>

#include "s3/xml.h"

namespace ferry::gateway {
namespace {

// ferry's own S3 client parses what the gateway lists, URL-encoded or not.
TEST(S3XmlTest, ListingsParseBackWithFerrysClientParser) {
  MergedListing page;
  ObjectInfo o;
  o.key = "dir/a b&c<d>";
  o.size = 12;
  o.etag = "0123";
  page.objects.push_back(o);
  page.prefixes.push_back("dir/sub dir/");
  page.truncated = true;
  page.next_after = "dir/sub dir/";
  for (bool url : {false, true}) {
    ListParams p;
    p.bucket = "b";
    p.prefix = "dir/";
    p.delimiter = "/";
    p.url_encoding = url;
    auto parsed = s3::ParseListObjectsV2(ListXml(p, page, EncodeToken(page.next_after)));
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    ASSERT_EQ(parsed->objects.size(), 1u);
    EXPECT_EQ(parsed->objects[0].key, o.key);
    EXPECT_EQ(parsed->objects[0].size, 12u);
    EXPECT_EQ(parsed->objects[0].etag, "0123");
    EXPECT_EQ(parsed->common_prefixes, std::vector<std::string>{"dir/sub dir/"});
    EXPECT_TRUE(parsed->truncated);
    auto token = DecodeToken(parsed->next_continuation_token);
    ASSERT_TRUE(token.ok());
    EXPECT_EQ(*token, "dir/sub dir/");
  }
}

TEST(S3XmlTest, RequestBodiesAndTheirErrors) {
  auto parts = ParseCompleteParts(
      "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"a\"</ETag></Part>"
      "<Part><PartNumber>2</PartNumber><ETag>b</ETag></Part></CompleteMultipartUpload>");
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].etag, "a");
  EXPECT_EQ((*parts)[1].number, 2);
  EXPECT_FALSE(ParseCompleteParts("<CompleteMultipartUpload/>").ok());
  EXPECT_FALSE(ParseCompleteParts("<CompleteMultipartUpload><Part><PartNumber>0</PartNumber>"
                                  "</Part></CompleteMultipartUpload>")
                   .ok());
  EXPECT_FALSE(ParseCompleteParts("<nope").ok());
  auto del = ParseDeleteRequest(
      "<Delete><Quiet>true</Quiet><Object><Key>a</Key></Object><Object><Key>b c</Key></Object>"
      "</Delete>");
  ASSERT_TRUE(del.ok());
  EXPECT_TRUE(del->quiet);
  EXPECT_EQ(del->keys, (std::vector<std::string>{"a", "b c"}));
  EXPECT_FALSE(ParseDeleteRequest("<Delete></Delete>").ok());
  EXPECT_FALSE(DecodeToken("%%%").ok());
  s3::ErrorDocument e;
  ASSERT_TRUE(s3::ParseError(ErrorXml("NoSuchKey", "gone <now>", "/b/k"), &e));
  EXPECT_EQ(e.code, "NoSuchKey");
  EXPECT_EQ(e.message, "gone <now>");
}

}  // namespace
}  // namespace ferry::gateway
