#include "engine/lru_cache.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace ferry {
namespace {

std::shared_ptr<const int> V(int v) { return std::make_shared<const int>(v); }

TEST(LruCache, EvictsTheLeastRecentlyUsedByCost) {
  LruCache<int> c(100);
  c.Put("a", V(1), 40);
  c.Put("b", V(2), 40);
  ASSERT_NE(c.Get("a"), nullptr);  // a is now the most recent
  c.Put("c", V(3), 40);            // 120 > 100: b goes
  EXPECT_EQ(c.Get("b"), nullptr);
  EXPECT_EQ(*c.Get("a"), 1);
  EXPECT_EQ(*c.Get("c"), 3);
  EXPECT_EQ(c.bytes(), 80u);
  EXPECT_EQ(c.entries(), 2u);
}

TEST(LruCache, ReplacingRemovingAndOversizedValuesKeepTheAccountExact) {
  LruCache<int> c(100);
  c.Put("a", V(1), 30);
  c.Put("a", V(2), 50);
  EXPECT_EQ(*c.Get("a"), 2);
  EXPECT_EQ(c.bytes(), 50u);
  c.Put("a", V(3), 101);  // too big for the budget: not kept, the old one gone
  EXPECT_EQ(c.Get("a"), nullptr);
  EXPECT_EQ(c.bytes(), 0u);
  c.Put("b", V(4), 10);
  c.Remove("b");
  c.Remove("never");
  EXPECT_EQ(c.bytes(), 0u);
  EXPECT_EQ(c.entries(), 0u);
}

TEST(LruCache, ConcurrentUseStaysWithinTheBudget) {
  LruCache<std::string> c(10'000);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5000; ++i) {
        std::string key = std::to_string((i * 7 + t) % 300);
        if (i % 3 == 0) {
          c.Put(key, std::make_shared<const std::string>(key), 100);
        } else if (auto v = c.Get(key)) {
          EXPECT_EQ(*v, key);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LE(c.bytes(), 10'000u);
  EXPECT_EQ(c.bytes(), c.entries() * 100);
}

}  // namespace
}  // namespace ferry
