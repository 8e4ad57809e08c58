#include "codec/zstd_codec.h"

#include <gtest/gtest.h>
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_getFrameHeader (exported by Debian's libzstd)
#include <zstd.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

namespace ferry::codec {
namespace {

// Text-like bytes: words from a small vocabulary, so they compress.
std::string Text(size_t n, uint32_t seed) {
  static const char* kWords[] = {"<div class=\"row\">", "function", "return", "the", "cache",
                                 "{\"key\": ", "</p>\n", "transcoding", "zstd", "origin"};
  std::mt19937 rng(seed);
  std::string out;
  while (out.size() < n) {
    out += kWords[rng() % 10];
    out += ' ';
  }
  out.resize(n);
  return out;
}

TEST(ZstdCodecTest, RoundTripsAndShrinksText) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{4096}, size_t{1} << 20}) {
    std::string in = Text(n, static_cast<uint32_t>(n));
    auto z = ZstdCompress(in);
    ASSERT_TRUE(z.ok()) << z.status().ToString();
    if (n >= 4096) {
      EXPECT_LT(z->size() * 3, in.size()) << n;
    }
    auto back = ZstdDecompress(*z);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_TRUE(*back == in) << n;
  }
}

// Small bodies compress with libzstd's own parameters for their size and
// level: the frame is libzstd's own plus the 4-byte checksum, and it
// round-trips.
TEST(ZstdCodecTest, SmallBodiesMakeLibzstdsOwnFrame) {
  for (size_t n : {size_t{4096}, size_t{10'000}, size_t{16384}, size_t{40'000}, size_t{65536}}) {
    // Less repetitive than Text(): numbered lines, as in a JSON or CSS file.
    std::string in;
    std::mt19937 rng(static_cast<uint32_t>(n));
    while (in.size() < n) in += "{\"id\": " + std::to_string(rng() % 100000) + ", \"name\": \"item" + std::to_string(rng() % 977) + "\"},\n";
    in.resize(n);
    auto z = ZstdCompress(in, 3);
    ASSERT_TRUE(z.ok()) << z.status().ToString();
    std::string plain(ZSTD_compressBound(n), '\0');
    size_t m = ZSTD_compress(plain.data(), plain.size(), in.data(), in.size(), 3);
    ASSERT_FALSE(ZSTD_isError(m));
    EXPECT_EQ(z->size(), m + 4) << n;  // + the checksum
    EXPECT_EQ(*ZstdDecompress(*z), in) << n;
  }
}

TEST(ZstdCodecTest, FrameCarriesContentSizeAndChecksum) {
  std::string in = Text(100'000, 1);
  auto z = ZstdCompress(in);
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(ZstdFrameContentSize(*z), in.size());
  ZSTD_frameHeader h{};
  ASSERT_EQ(ZSTD_getFrameHeader(&h, z->data(), z->size()), 0u);
  EXPECT_EQ(h.checksumFlag, 1u);
  EXPECT_LE(h.windowSize, 8u << 20);
  EXPECT_EQ(ZstdFrameContentSize("not zstd"), std::nullopt);
}

TEST(ZstdCodecTest, StreamsInPiecesWithAPledgedSize) {
  std::string in = Text(3 << 20, 2);
  ZstdEncoder e(3);
  std::string z;
  ASSERT_TRUE(e.Begin(in.size()).ok());
  for (size_t at = 0; at < in.size(); at += 70'001) {
    ASSERT_TRUE(e.Update(std::string_view(in).substr(at, 70'001), &z).ok());
  }
  ASSERT_TRUE(e.Finish(&z).ok());
  EXPECT_EQ(ZstdFrameContentSize(z), in.size());
  // Decode one byte at a time: output comes out as input arrives.
  ZstdDecoder d;
  std::string out;
  for (char c : z) ASSERT_TRUE(d.Update(std::string_view(&c, 1), &out).ok());
  EXPECT_TRUE(d.Finish().ok());
  EXPECT_TRUE(out == in);
  // The encoder is reused for the next body.
  std::string z2;
  ASSERT_TRUE(e.Begin(std::nullopt).ok());
  ASSERT_TRUE(e.Update("again", &z2).ok());
  ASSERT_TRUE(e.Finish(&z2).ok());
  EXPECT_EQ(*ZstdDecompress(z2), "again");
}

TEST(ZstdCodecTest, FewerBytesThanPledgedIsAnError) {
  ZstdEncoder e;
  std::string z;
  ASSERT_TRUE(e.Begin(100).ok());
  ASSERT_TRUE(e.Update("short", &z).ok());
  EXPECT_FALSE(e.Finish(&z).ok());
}

TEST(ZstdCodecTest, HighLevelsStayWithinTheRfcWindow) {
  std::string in = Text(1 << 20, 3);
  ZstdEncoder e(22);  // would pick a 128 MiB window
  std::string z;
  ASSERT_TRUE(e.Begin(std::nullopt).ok());  // size unknown: the level alone picks the window
  ASSERT_TRUE(e.Update(in, &z).ok());
  ASSERT_TRUE(e.Finish(&z).ok());
  ZSTD_frameHeader h{};
  ASSERT_EQ(ZSTD_getFrameHeader(&h, z.data(), z.size()), 0u);
  EXPECT_LE(h.windowSize, 8ull << 20);
  EXPECT_TRUE(*ZstdDecompress(z) == in);
}

TEST(ZstdCodecTest, RejectsAFrameWithALargerWindow) {
  // Made with raw libzstd: a 128 MiB window and no content size.
  std::string in = Text(16 << 20, 4);
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, 27);
  std::string z(ZSTD_compressBound(in.size()), '\0');
  ZSTD_outBuffer ob{z.data(), z.size(), 0};
  ZSTD_inBuffer ib{in.data(), in.size(), 0};
  ASSERT_EQ(ZSTD_compressStream2(c, &ob, &ib, ZSTD_e_end), 0u);
  ZSTD_freeCCtx(c);
  z.resize(ob.pos);
  auto out = ZstdDecompress(z);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), ErrorCode::kCorruption);
}

TEST(ZstdCodecTest, DamageIsDetected) {
  std::string in = Text(200'000, 5);
  std::string z = *ZstdCompress(in);
  std::string flipped = z;
  flipped[flipped.size() / 2] ^= 0x20;
  EXPECT_FALSE(ZstdDecompress(flipped).ok());
  std::string checksum = z;
  checksum.back() ^= 0x01;  // the last 4 bytes are the checksum
  EXPECT_FALSE(ZstdDecompress(checksum).ok());
  ZstdDecoder d;
  std::string out;
  ASSERT_TRUE(d.Update(std::string_view(z).substr(0, z.size() - 10), &out).ok());
  EXPECT_FALSE(d.Finish().ok()) << "a frame cut short must not pass";
}

}  // namespace
}  // namespace ferry::codec

namespace ferry::codec {
namespace {

TEST(ZstdCodecTest, OneShotCompressionFromManyThreadsAtSeveralLevelsAndSizes) {
  // Shared contexts (a pool, most recently used first): concurrent calls at
  // different levels and sizes, one over the 4 MiB scratch limit, each
  // decode to their own input.
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &bad] {
      std::mt19937 rng(static_cast<unsigned>(t));
      for (int i = 0; i < 20; ++i) {
        size_t n = (i == 7 && t == 0) ? (6u << 20) : 1000 + rng() % 200'000;
        std::string in;
        while (in.size() < n) in += "thread " + std::to_string(t) + " body " + std::to_string(rng() % 1000) + "\n";
        in.resize(n);
        int level = 1 + (t + i) % 6;
        auto z = ZstdCompress(in, level);
        if (!z.ok() || ZstdFrameContentSize(*z) != in.size() || *ZstdDecompress(*z) != in) bad++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad, 0);
}

}  // namespace
}  // namespace ferry::codec
