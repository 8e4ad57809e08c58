#include "codec/text_codings.h"

#include <gtest/gtest.h>

#include <random>

namespace ferry::codec {
namespace {

std::string Text(size_t n) {
  std::string s;
  while (s.size() < n) s += "<li>ferry answers gzip and br clients too, item " + std::to_string(s.size()) + "</li>\n";
  s.resize(n);
  return s;
}

TEST(TextCodingsTest, GzipAndBrotliRoundTripAtEverySize) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{1000}, size_t{40'000}, size_t{3'000'000}}) {
    std::string in = Text(n);
    for (int level : {1, 6, 9}) {
      auto z = GzipCompress(in, level);
      ASSERT_TRUE(z.ok()) << z.status().ToString();
      EXPECT_EQ(*GzipDecompress(*z), in) << n << " gzip " << level;
      if (n >= 1000) {
        EXPECT_LT(z->size(), in.size() / 3) << n;
      }
    }
    for (int q : {0, 4, 11}) {
      if (q == 11 && n > 100'000) continue;  // slow, and says nothing more
      auto b = BrotliCompress(in, q);
      ASSERT_TRUE(b.ok()) << b.status().ToString();
      EXPECT_EQ(*BrotliDecompress(*b), in) << n << " br " << q;
    }
  }
}

TEST(TextCodingsTest, AThreadsCoderIsReusedAcrossLevels) {
  std::string in = Text(20'000);
  auto a = GzipCompress(in, 1), b = GzipCompress(in, 9), c = GzipCompress(in, 1);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *c);  // a reset stream gives the same member again
  EXPECT_LE(b->size(), a->size());
}

TEST(TextCodingsTest, DamageAndCutsAreCorruption) {
  std::string in = Text(50'000);
  std::string gz = *GzipCompress(in, 6), br = *BrotliCompress(in, 5);
  EXPECT_EQ(GzipDecompress(gz.substr(0, gz.size() / 2)).status().code(), ErrorCode::kCorruption);
  EXPECT_EQ(BrotliDecompress(br.substr(0, br.size() / 2)).status().code(), ErrorCode::kCorruption);
  std::string bad = gz;
  bad[bad.size() - 6] ^= 0x55;  // the CRC-32 in the trailer
  EXPECT_EQ(GzipDecompress(bad).status().code(), ErrorCode::kCorruption);
  EXPECT_EQ(GzipDecompress("not gzip at all").status().code(), ErrorCode::kCorruption);
  EXPECT_EQ(BrotliDecompress(br + "x").status().code(), ErrorCode::kCorruption);
  // Two members are one body (RFC 1952 2.2).
  EXPECT_EQ(*GzipDecompress(*GzipCompress("ab", 1) + *GzipCompress("cd", 9)), "abcd");
}

TEST(TextCodingsTest, LevelsOutOfRangeAreRefused) {
  EXPECT_EQ(GzipCompress("x", 0).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(GzipCompress("x", 10).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(BrotliCompress("x", 12).status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace ferry::codec
