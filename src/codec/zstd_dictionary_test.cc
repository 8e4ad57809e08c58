#include "codec/zstd_dictionary.h"

#include <gtest/gtest.h>

#include "codec/zstd_codec.h"

namespace ferry::codec {
namespace {

// A text whose next version differs in a few places.
std::string Version(int n) {
  std::string s;
  for (int i = 0; i < 4000; ++i)
    s += "function f" + std::to_string(i * 7919 % 10007) + "(a) { return a + " + std::to_string(i) +
         "; }\n";
  s.replace(1000 * n % s.size(), 5, "/*v*/");
  return s;
}

TEST(ZstdDictionaryTest, AnEditedVersionCostsLittleAgainstTheLast) {
  std::string v1 = Version(1), v2 = Version(2);
  auto plain = ZstdCompress(v2, 3);
  auto delta = ZstdCompressWithPrefix(v2, v1, 3);
  ASSERT_TRUE(plain.ok() && delta.ok());
  EXPECT_LT(delta->size() * 20, plain->size()) << delta->size() << " vs " << plain->size();
  auto back = ZstdDecompressWithPrefix(*delta, v1, v2.size());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, v2);
  // With other bytes as the dictionary it does not decode to v2.
  auto wrong = ZstdDecompressWithPrefix(*delta, Version(3), v2.size());
  EXPECT_TRUE(!wrong.ok() || *wrong != v2);
  // A cap under the content's size refuses it.
  EXPECT_FALSE(ZstdDecompressWithPrefix(*delta, v1, v2.size() - 1).ok());
  // Cut short.
  EXPECT_FALSE(ZstdDecompressWithPrefix(delta->substr(0, delta->size() - 3), v1, v2.size()).ok());
}

TEST(ZstdDictionaryTest, SkipsASkippableFrameBeforeTheContent) {
  std::string dict = Version(1), v2 = Version(2);
  auto delta = ZstdCompressWithPrefix(v2, dict, 3);
  ASSERT_TRUE(delta.ok());
  std::string body = std::string(
                         "\x5e\x2a\x4d\x18\x04\x00\x00\x00"
                         "abcd",
                         12) +
                     *delta;
  auto back = ZstdDecompressWithPrefix(body, dict, v2.size());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, v2);
}

TEST(ZstdDictionaryTest, WindowFollowsRfc9842) {
  EXPECT_EQ(DczMaxWindowLog(0), 23);            // 8 MB
  EXPECT_EQ(DczMaxWindowLog(16ull << 20), 24);  // 1.25 x 16 MB = 20 MB: 2^24
  EXPECT_EQ(DczMaxWindowLog(1ull << 30), 27);   // capped at 128 MB
}

}  // namespace
}  // namespace ferry::codec
