#include "crypto/digest.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

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

TEST(DigestTest, HmacSha256Rfc4231AndKeyChanges) {
  // RFC 4231 test case 2, then an empty key, then case 2 again: each call
  // is keyed afresh (the per-thread context must not keep the last key).
  const std::string want2 = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
  const std::string want_empty = "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad";
  EXPECT_EQ(HexLower(HmacSha256("Jefe", "what do ya want for nothing?")), want2);
  EXPECT_EQ(HexLower(HmacSha256("", "")), want_empty);
  EXPECT_EQ(HexLower(HmacSha256("Jefe", "what do ya want for nothing?")), want2);
  // A key longer than the block (131 bytes of 0xaa), RFC 4231 case 6.
  EXPECT_EQ(HexLower(HmacSha256(std::string(131, '\xaa'),
                                "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  // Keyed once, used many times: the same answers as keying every time.
  HmacSha256Key jefe("Jefe");
  EXPECT_EQ(HexLower(jefe.Mac("what do ya want for nothing?")), want2);
  EXPECT_EQ(HexLower(jefe.Mac("what do ya want for nothing?")), want2);
  EXPECT_EQ(HexLower(jefe.Mac("")), HexLower(HmacSha256("Jefe", "")));
  HmacSha256Key empty("");
  EXPECT_EQ(HexLower(empty.Mac("")), want_empty);
  // Other threads get their own contexts and the same answers.
  std::vector<std::thread> threads;
  std::atomic<int> right{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 100; ++j) {
        if (HexLower(HmacSha256("Jefe", "what do ya want for nothing?")) == want2 &&
            HexLower(Sha256("abc")) ==
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") {
          right++;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(right.load(), 400);
}

TEST(DigestTest, Md5HexShape) {
  EXPECT_TRUE(IsMd5Hex("d41d8cd98f00b204e9800998ecf8427e"));
  EXPECT_FALSE(IsMd5Hex("d41d8cd98f00b204e9800998ecf8427e-2"));
  EXPECT_FALSE(IsMd5Hex("xyz"));
}

}  // namespace
}  // namespace ferry
