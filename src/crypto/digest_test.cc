#include "crypto/digest.h"

#include <gtest/gtest.h>

namespace ferry {
namespace {

// Known answers (RFC 1321 test suite; Content-MD5 as S3 and `openssl md5
// -binary | base64` give it).
TEST(DigestTest, Md5KnownAnswers) {
  EXPECT_EQ(HexLower(Md5("")), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(HexLower(Md5("abc")), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(Base64Encode(Md5("")), "1B2M2Y8AsgTpgAmY7PhCfg==");
}

TEST(DigestTest, ContentMd5FromHexMatchesTheRawDigest) {
  EXPECT_EQ(ContentMd5FromHex("d41d8cd98f00b204e9800998ecf8427e"), "1B2M2Y8AsgTpgAmY7PhCfg==");
  EXPECT_EQ(ContentMd5FromHex("900150983CD24FB0D6963F7D28E17F72"), Base64Encode(Md5("abc")));
}

TEST(DigestTest, MultipartEtagOfParts) {
  // Two parts "abc" and "": MD5 over their binary MD5s, then "-2".
  std::string both = std::string(reinterpret_cast<const char*>(Md5("abc").data()), 16) +
                     std::string(reinterpret_cast<const char*>(Md5("").data()), 16);
  EXPECT_EQ(MultipartEtag({HexLower(Md5("abc")), HexLower(Md5(""))}),
            HexLower(Md5(both)) + "-2");
}

TEST(DigestTest, Md5HexShape) {
  EXPECT_TRUE(IsMd5Hex("d41d8cd98f00b204e9800998ecf8427e"));
  EXPECT_FALSE(IsMd5Hex("d41d8cd98f00b204e9800998ecf8427e-2"));
  EXPECT_FALSE(IsMd5Hex("xyz"));
}

}  // namespace
}  // namespace ferry
