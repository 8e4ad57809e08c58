#include "snapshot/learned_order.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace ferry::snapshot {
namespace {

// 100 chunks, chunk 50 all zeros.
Manifest Image() {
  Manifest m;
  m.name = "img";
  m.chunk_size = 4096;
  m.image_size = 100 * 4096;
  m.chunks.assign(100, std::string(64, 'a'));
  m.chunks[50] = "";
  return m;
}

TEST(LearnedOrderTest, TheFirstCloneTeachesAnOrderWhereThereWasNone) {
  Manifest m = Image();
  MergeFirstTouches(&m, {7, 3, 50, 120, 3, 9},
                    100);  // a zero chunk, one out of range, a repeat: ignored
  EXPECT_EQ(m.prefetch, (std::vector<uint32_t>{7, 3, 9}));
  EXPECT_EQ(m.learned_clones, 1u);
  EXPECT_EQ(m.learned_observations, 1u);
  EXPECT_EQ(m.prefetch_seen, (std::vector<uint32_t>{1, 1, 1}));
  EXPECT_EQ(m.prefetch_rank_sum, (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_TRUE(DecodeManifest(EncodeManifest(m)).ok());
}

TEST(LearnedOrderTest, KeepsTheOrderOfFirstNeedAcrossClones) {
  Manifest m = Image();
  MergeFirstTouches(&m, {1, 2, 3, 4}, 100);
  MergeFirstTouches(&m, {1, 3, 2, 4, 5}, 100);  // 2 and 3 swap; 5 is new and late
  MergeFirstTouches(&m, {1, 2, 3, 4, 5}, 100);
  // Mean ranks: 1: 0, 2: 4/3, 3: 5/3, 4: 3, 5: 8/2.
  EXPECT_EQ(m.prefetch, (std::vector<uint32_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(m.learned_clones, 3u);
  EXPECT_EQ(m.prefetch_seen, (std::vector<uint32_t>{3, 3, 3, 3, 2}));
}

TEST(LearnedOrderTest, APredictionThatNoCloneReadsFallsOutAfterFourClones) {
  Manifest m = Image();
  m.prefetch = {60, 61, 1};  // predicted: 60 and 61 are never read
  std::vector<uint32_t> boot = {1, 2, 3};
  for (int k = 1; k <= 3; ++k) {
    MergeFirstTouches(&m, boot, 100);
    EXPECT_EQ(m.learned_observations, static_cast<uint32_t>(k + 1));  // the prediction counts once
  }
  EXPECT_NE(std::find(m.prefetch.begin(), m.prefetch.end(), 60u),
            m.prefetch.end());  // 1 of 4: still in
  MergeFirstTouches(&m, boot, 100);
  EXPECT_EQ(m.prefetch, (std::vector<uint32_t>{1, 2, 3}));  // 1 of 5: out
}

TEST(LearnedOrderTest, ARareLateTouchDoesNotGetIn) {
  Manifest m = Image();
  for (int k = 0; k < 4; ++k) MergeFirstTouches(&m, {1, 2}, 100);
  MergeFirstTouches(&m, {1, 2, 99}, 100);  // one clone of five touched 99
  EXPECT_EQ(m.prefetch, (std::vector<uint32_t>{1, 2}));
}

TEST(LearnedOrderTest, BoundedKeepingTheMostSeen) {
  Manifest m = Image();
  MergeFirstTouches(&m, {10, 11, 12, 13, 14, 15}, 3);  // a trace counts up to the bound
  EXPECT_EQ(m.prefetch, (std::vector<uint32_t>{10, 11, 12}));
  MergeFirstTouches(&m, {20, 12, 11}, 3);
  // 11 and 12, seen twice, stay; of 10 and 20, seen once and both needed
  // first, the lower index. Then in the order of need: 10 (mean rank 0),
  // 11 and 12 (1.5 each).
  EXPECT_EQ(m.prefetch, (std::vector<uint32_t>{10, 11, 12}));
  EXPECT_EQ(m.prefetch_seen, (std::vector<uint32_t>{1, 2, 2}));
}

TEST(LearnedOrderTest, StopsLearningOnceSettled) {
  Manifest m = Image();
  for (uint32_t k = 0; k < kMaxLearnedClones; ++k) MergeFirstTouches(&m, {1, 2}, 100);
  Manifest before = m;
  MergeFirstTouches(&m, {5, 6}, 100);
  EXPECT_EQ(EncodeManifest(m), EncodeManifest(before));
}

}  // namespace
}  // namespace ferry::snapshot
