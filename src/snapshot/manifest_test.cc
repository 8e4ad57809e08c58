#include "snapshot/manifest.h"

#include <gtest/gtest.h>

namespace ferry::snapshot {
namespace {

Manifest Sample() {
  Manifest m;
  m.name = "debian-12.img";
  m.image_size = 3 * 4096 + 100;
  m.chunk_size = 4096;
  m.created = "2026-12-03T06:00:00Z";
  m.chunks = {std::string(64, 'a'), "", std::string(64, 'b'), std::string(64, 'a')};
  m.prefetch = {2, 0};
  return m;
}

TEST(ManifestTest, RoundTrips) {
  Manifest m = Sample();
  auto d = DecodeManifest(EncodeManifest(m));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->name, m.name);
  EXPECT_EQ(d->image_size, m.image_size);
  EXPECT_EQ(d->chunks, m.chunks);
  EXPECT_EQ(d->prefetch, m.prefetch);
  EXPECT_EQ(d->ChunkCount(), 4u);
  EXPECT_EQ(d->ChunkLength(3), 100u);
  EXPECT_EQ(d->ChunkLength(4), 0u);
}

TEST(ManifestTest, ALearnedOrderRoundTripsAndMustMatchItsOrder) {
  Manifest m = Sample();
  m.learned_clones = 2;
  m.learned_observations = 3;
  m.prefetch_seen = {3, 1};
  m.prefetch_rank_sum = {0, 7};
  auto d = DecodeManifest(EncodeManifest(m));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->learned_clones, 2u);
  EXPECT_EQ(d->learned_observations, 3u);
  EXPECT_EQ(d->prefetch_seen, m.prefetch_seen);
  EXPECT_EQ(d->prefetch_rank_sum, m.prefetch_rank_sum);
  EXPECT_EQ(EncodeManifest(Sample()).find("learned"), std::string::npos);  // none: as before
  for (auto edit : std::vector<void (*)(Manifest&)>{
           [](Manifest& x) { x.prefetch_seen.pop_back(); },      // not one per entry
           [](Manifest& x) { x.prefetch_rank_sum.push_back(1); },
           [](Manifest& x) { x.prefetch_seen[0] = 0; },          // never seen
           [](Manifest& x) { x.prefetch_seen[0] = 4; },          // more than observed
           [](Manifest& x) { x.learned_observations = 1; }}) {  // fewer observations than clones
    Manifest bad = m;
    edit(bad);
    auto r = DecodeManifest(EncodeManifest(bad));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), ErrorCode::kCorruption);
  }
}

TEST(ManifestTest, AnyChangedByteIsRefused) {
  std::string text = EncodeManifest(Sample());
  for (size_t i = 0; i < text.size(); ++i) {
    std::string bad = text;
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    auto d = DecodeManifest(bad);
    if (d.ok()) {
      // Only a change JSON ignores (whitespace made whitespace) may pass, and
      // then the content must be identical.
      EXPECT_EQ(EncodeManifest(*d), text) << "byte " << i;
      continue;
    }
    EXPECT_EQ(d.status().code(), ErrorCode::kCorruption) << i;
    EXPECT_EQ(d.status().message().find('\n'), std::string::npos);
  }
  EXPECT_FALSE(DecodeManifest(text.substr(0, text.size() / 2)).ok());
  EXPECT_FALSE(DecodeManifest("").ok());
}

TEST(ManifestTest, InconsistentContentsAreRefusedEvenWithAGoodChecksum) {
  auto refused = [](void (*edit)(Manifest&)) {
    Manifest m = Sample();
    edit(m);
    return !DecodeManifest(EncodeManifest(m)).ok();
  };
  EXPECT_TRUE(refused([](Manifest& m) { m.chunks.pop_back(); }));
  EXPECT_TRUE(refused([](Manifest& m) { m.chunk_size = 5000; }));
  EXPECT_TRUE(refused([](Manifest& m) { m.chunk_size = 1024; }));
  EXPECT_TRUE(refused([](Manifest& m) { m.chunks[0] = "ABC"; }));
  EXPECT_TRUE(refused([](Manifest& m) { m.prefetch = {9}; }));
  EXPECT_TRUE(refused([](Manifest& m) { m.prefetch = {1, 1}; }));
  EXPECT_TRUE(refused([](Manifest& m) { m.name = "../escape"; }));
}

// Numbers that are floats or out of range (UBSan found nlohmann casting
// 4e+23 to uint64_t through snapshot_fuzz) are refused as damage.
TEST(ManifestTest, NumbersThatAreNotIntegersInRangeAreRefused) {
  const std::string good = EncodeManifest(Sample());
  for (auto [from, to] : {std::pair{"\"image_size\": 12388", "\"image_size\": 4e+23"},
                          {"\"chunk_size\": 4096", "\"chunk_size\": 4096.5"},
                          {"\"prefetch\": [", "\"prefetch\": [-1, "},
                          {"\"prefetch\": [", "\"prefetch\": [4294967296, "}}) {
    std::string bad = good;
    size_t at = bad.find(from);
    ASSERT_NE(at, std::string::npos) << from << " in " << good;
    bad.replace(at, std::string(from).size(), to);
    auto d = DecodeManifest(bad);
    ASSERT_FALSE(d.ok()) << to;
    EXPECT_EQ(d.status().code(), ErrorCode::kCorruption) << to;
  }
}

TEST(ManifestTest, Names) {
  EXPECT_TRUE(ValidSnapshotName("base-2026.12_03"));
  for (const char* bad : {"", ".hidden", "a/b", "a b", "..", "é"}) EXPECT_FALSE(ValidSnapshotName(bad)) << bad;
  EXPECT_FALSE(ValidSnapshotName(std::string(129, 'a')));
}

}  // namespace
}  // namespace ferry::snapshot
