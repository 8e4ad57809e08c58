#include "cache/seek_table.h"

#include <gtest/gtest.h>

namespace ferry::cache {
namespace {

// Three whole frames of 100 logical bytes and a last one of 30.
SeekTable FourFrames(bool checksums = false) {
  SeekTable t(checksums);
  for (uint32_t stored : {40u, 41u, 42u}) t.Add({stored, 100, stored * 7});
  t.Add({20, 30, 99});
  return t;
}

TEST(SeekTableTest, OffsetsAccumulate) {
  SeekTable t = FourFrames();
  EXPECT_EQ(t.size(), 4u);
  EXPECT_EQ(t.logical_length(), 330u);
  EXPECT_EQ(t.stored_length(), 143u);
  EXPECT_EQ(t.stored_at(2), 81u);
  EXPECT_EQ(t.logical_at(3), 300u);
  EXPECT_EQ(t.logical_at(4), 330u);
}

TEST(SeekTableTest, ARangeCoversOnlyTheFramesHoldingIt) {
  SeekTable t = FourFrames();
  struct Case {
    uint64_t offset, count;
    size_t first, last;
  } cases[] = {
      {0, 1, 0, 0},      // the first byte
      {0, 100, 0, 0},    // exactly the first frame
      {99, 1, 0, 0},     // its last byte
      {99, 2, 0, 1},     // across an edge
      {100, 1, 1, 1},    // the first byte of the second frame
      {100, 100, 1, 1},  // exactly a middle frame
      {150, 100, 1, 2},  // across frames
      {50, 260, 0, 3},   // from the first into the last
      {299, 2, 2, 3},    // into the last, partial frame
      {300, 30, 3, 3},   // exactly the last frame
      {329, 1, 3, 3},    // the very last byte
      {0, 330, 0, 3},    // everything
  };
  for (const Case& c : cases) {
    SeekTable::Span s = t.Covering(c.offset, c.count);
    EXPECT_EQ(s.first, c.first) << c.offset << "+" << c.count;
    EXPECT_EQ(s.last, c.last) << c.offset << "+" << c.count;
  }
}

TEST(SeekTableTest, EncodesAsZstdsSeekableFormatAndBack) {
  for (bool checksums : {false, true}) {
    SeekTable t = FourFrames(checksums);
    std::string e = t.Encode();
    ASSERT_EQ(e.size(), 8 + 4 * (checksums ? 12 : 8) + 9u);
    EXPECT_EQ(e.substr(0, 4), std::string("\x5e\x2a\x4d\x18", 4));  // skippable frame 0x184D2A5E
    EXPECT_EQ(e.substr(e.size() - 4), std::string("\xb1\xea\x92\x8f", 4));  // 0x8F92EAB1
    EXPECT_EQ(static_cast<uint8_t>(e[e.size() - 5]), checksums ? 0x80 : 0);
    auto size = SeekTable::FrameSizeFromFooter(std::string_view(e).substr(e.size() - 9));
    ASSERT_TRUE(size.ok());
    EXPECT_EQ(*size, e.size());
    auto back = SeekTable::Decode(e);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    ASSERT_EQ(back->size(), 4u);
    EXPECT_EQ(back->checksums(), checksums);
    EXPECT_EQ(back->frame(3).stored, 20u);
    EXPECT_EQ(back->frame(1).checksum, checksums ? 41u * 7 : 0u);
    EXPECT_EQ(back->logical_length(), 330u);
  }
}

TEST(SeekTableTest, AnEmptyObjectHasNoFrames) {
  SeekTable t;
  EXPECT_EQ(t.logical_length(), 0u);
  auto back = SeekTable::Decode(t.Encode());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->size(), 0u);
  EXPECT_EQ(back->stored_length(), 0u);
}

TEST(SeekTableTest, DamageIsFound) {
  std::string e = FourFrames().Encode();
  EXPECT_FALSE(SeekTable::Decode(e.substr(1)).ok());
  EXPECT_FALSE(SeekTable::Decode(e.substr(0, e.size() - 1)).ok());
  std::string bad = e;
  bad[e.size() - 9] = 5;  // the frame count
  EXPECT_FALSE(SeekTable::Decode(bad).ok());
  bad = e;
  bad[e.size() - 5] = 0x40;  // reserved descriptor bits
  EXPECT_FALSE(SeekTable::Decode(bad).ok());
  bad = e;
  bad[0] = 0;
  EXPECT_FALSE(SeekTable::Decode(bad).ok());
}

}  // namespace
}  // namespace ferry::cache
