#include "volume/chunk_cache.h"

#include <gtest/gtest.h>

#include <map>

namespace ferry::volume {
namespace {

class MapSource : public ChunkSource {
 public:
  std::map<std::string, std::string> chunks;
  int fetches = 0;
  Result<std::string> Fetch(const std::string& hash, bool) override {
    ++fetches;
    auto it = chunks.find(hash);
    if (it == chunks.end()) return Status(ErrorCode::kNotFound, "no chunk " + hash);
    return it->second;
  }
};

TEST(ChunkCacheTest, KeepsEveryChunkByDefault) {
  MapSource src;
  src.chunks["a"] = std::string(100000, 'a');
  ChunkCache cache(&src, 1 << 20, 1);
  ASSERT_EQ(*cache.Fetch("a", false), src.chunks["a"]);
  ASSERT_EQ(*cache.Fetch("a", false), src.chunks["a"]);
  EXPECT_EQ(src.fetches, 1);
  EXPECT_EQ(cache.stats().hits, 1u);
}

// The first hit decodes and keeps a decoded copy; later hits copy it.
TEST(ChunkCacheTest, KeepsRecentHitsDecoded) {
  MapSource src;
  std::string bytes;
  for (int i = 0; i < 100000; ++i) bytes += static_cast<char>('a' + i % 7);
  src.chunks["a"] = bytes;
  ChunkCache cache(&src, 1 << 20, 1);
  EXPECT_EQ(ChunkCache::HotBytes(1 << 20), 1u << 18);
  EXPECT_EQ(ChunkCache::HotBytes(1ull << 40), 64ull << 20);
  ASSERT_EQ(*cache.Fetch("a", false), bytes);  // from the source
  EXPECT_EQ(cache.stats().hot_bytes, 0u);
  ASSERT_EQ(*cache.Fetch("a", false), bytes);  // decoded, and kept so
  EXPECT_GE(cache.stats().hot_bytes, bytes.size());
  EXPECT_EQ(cache.stats().hot_hits, 0u);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(*cache.Fetch("a", false), bytes);
  EXPECT_EQ(cache.stats().hot_hits, 3u);
  EXPECT_EQ(cache.stats().hits, 4u);
  EXPECT_EQ(src.fetches, 1);
  // A pass-through cache keeps nothing, decoded or not.
  ChunkCache none(&src, 0, 1);
  ASSERT_EQ(*none.Fetch("a", false), bytes);
  ASSERT_EQ(*none.Fetch("a", false), bytes);
  EXPECT_EQ(none.stats().hot_bytes, 0u);
  EXPECT_EQ(src.fetches, 3);
}

TEST(ChunkCacheTest, KeepsOnlyWhatAnotherConsumerMayAskFor) {
  MapSource src;
  src.chunks["a"] = std::string(100000, 'a');
  src.chunks["b"] = std::string(100000, 'b');
  ChunkCache cache(&src, 1 << 20, 1);
  cache.KeepOnlyWhenShared();
  cache.AddConsumer();  // one volume hydrating alone: nothing kept
  ASSERT_EQ(*cache.Fetch("a", false), src.chunks["a"]);
  ASSERT_EQ(*cache.Fetch("a", false), src.chunks["a"]);
  EXPECT_EQ(src.fetches, 2);
  EXPECT_EQ(cache.stats().passed, 2u);
  EXPECT_EQ(cache.stats().stored_bytes, 0u);
  cache.AddConsumer();  // a second one: kept from now on
  ASSERT_EQ(*cache.Fetch("b", false), src.chunks["b"]);
  ASSERT_EQ(*cache.Fetch("b", false), src.chunks["b"]);
  EXPECT_EQ(src.fetches, 3);
  EXPECT_GT(cache.stats().stored_bytes, 0u);
  cache.RemoveConsumer();  // back to one: what is kept stays, nothing new is
  ASSERT_EQ(*cache.Fetch("b", false), src.chunks["b"]);
  EXPECT_EQ(src.fetches, 3);
  ASSERT_EQ(*cache.Fetch("a", false), src.chunks["a"]);
  EXPECT_EQ(src.fetches, 4);
  EXPECT_EQ(cache.stats().passed, 3u);
}

TEST(ChunkCacheTest, ABatchHoldKeepsTheFirstVolumesFetchesForTheRest) {
  MapSource src;
  src.chunks["a"] = std::string(100000, 'a');
  ChunkCache cache(&src, 1 << 20, 1);
  cache.KeepOnlyWhenShared();
  {
    ChunkCache::ConsumerHold batch(&cache);
    cache.AddConsumer();  // the batch's first volume, hydrating before the rest are attached
    ASSERT_EQ(*cache.Fetch("a", false), src.chunks["a"]);
    cache.AddConsumer();  // the second
    ASSERT_EQ(*cache.Fetch("a", false), src.chunks["a"]);
  }
  EXPECT_EQ(src.fetches, 1);
  EXPECT_EQ(cache.stats().hits, 1u);
  ChunkCache::ConsumerHold none(nullptr);  // a batch of one holds nothing
  cache.RemoveConsumer();  // one volume left: nothing new kept
  src.chunks["b"] = "b";
  ASSERT_EQ(*cache.Fetch("b", false), "b");
  EXPECT_EQ(cache.stats().passed, 1u);
}

}  // namespace
}  // namespace ferry::volume
