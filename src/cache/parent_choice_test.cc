#include "cache/parent_choice.h"

#include <gtest/gtest.h>

#include <map>

namespace ferry::cache {
namespace {

TEST(ParentOrderTest, EachKeyHasOneFirstChoiceAndTheKeysSpread) {
  const std::vector<std::string> parents = {"10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80"};
  std::map<size_t, int> first;
  for (int i = 0; i < 3000; ++i) {
    std::string key = "http://site.test/f" + std::to_string(i);
    auto order = ParentOrder(key, parents);
    ASSERT_EQ(order.size(), 3u);
    EXPECT_EQ(order, ParentOrder(key, parents));  // the same every time
    first[order[0]]++;
  }
  for (const auto& [p, n] : first) EXPECT_NEAR(n, 1000, 150) << parents[p];
}

TEST(ParentOrderTest, APartnerGoneMovesOnlyItsKeys) {
  const std::vector<std::string> three = {"a:1", "b:1", "c:1"}, two = {"a:1", "c:1"};
  int moved = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string key = "/k" + std::to_string(i);
    auto before = ParentOrder(key, three);
    auto after = ParentOrder(key, two);
    if (three[before[0]] == "b:1") {
      EXPECT_EQ(two[after[0]], three[before[1]]);  // its next choice
      ++moved;
    } else {
      EXPECT_EQ(two[after[0]], three[before[0]]);  // stays
    }
  }
  EXPECT_NEAR(moved, 1000, 150);
}

TEST(ParentOrderTest, NoneOrOne) {
  EXPECT_TRUE(ParentOrder("k", {}).empty());
  EXPECT_EQ(ParentOrder("k", {"only:1"}), std::vector<size_t>{0});
}

}  // namespace
}  // namespace ferry::cache
