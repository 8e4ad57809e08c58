#include "volume/placement.h"

#include <gtest/gtest.h>

namespace ferry::volume {
namespace {

constexpr uint64_t G = 1ull << 30;

TEST(PlacementTest, Table) {
  struct Case {
    const char* name;
    std::vector<PoolLoad> pools;
    uint64_t size;
    int count;
    std::vector<int> want;
  } cases[] = {
      {"equal pools alternate", {{100 * G, 0, 0, 0}, {100 * G, 0, 0, 0}}, G, 4, {0, 1, 0, 1}},
      {"more free space wins", {{10 * G, 0, 0, 0}, {100 * G, 0, 0, 0}}, G, 1, {1}},
      {"a busy hydrating pool loses", {{100 * G, 0, 500 << 20, 0}, {100 * G, 0, 0, 0}}, G, 1, {1}},
      {"writes count too", {{100 * G, 0, 0, 300 << 20}, {100 * G, 0, 0, 0}}, G, 1, {1}},
      {"fewer volumes win", {{100 * G, 50, 0, 0}, {100 * G, 5, 0, 0}}, G, 1, {1}},
      {"a full pool is skipped", {{G / 2, 0, 0, 0}, {5 * G, 40, 900 << 20, 900 << 20}}, G, 2, {1, 1}},
      {"a batch spreads over three", {{100 * G, 0, 0, 0}, {100 * G, 0, 0, 0}, {100 * G, 0, 0, 0}}, G, 6,
       {0, 1, 2, 0, 1, 2}},
  };
  for (const Case& c : cases) {
    auto got = PlaceVolumes(c.pools, c.size, c.count);
    ASSERT_TRUE(got.ok()) << c.name << ": " << got.status().ToString();
    EXPECT_EQ(*got, c.want) << c.name;
  }
}

TEST(PlacementTest, NoRoomIsAnError) {
  auto got = PlaceVolumes({{G, 0, 0, 0}, {G, 0, 0, 0}}, G, 3);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("volume 3 of 3"), std::string::npos);
  EXPECT_FALSE(PlaceVolumes({}, 1, 1).ok());
}

}  // namespace
}  // namespace ferry::volume
