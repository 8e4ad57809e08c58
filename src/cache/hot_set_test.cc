#include "cache/hot_set.h"

#include <gtest/gtest.h>

namespace ferry::cache {
namespace {

std::shared_ptr<const CachedObject> Obj(const std::string& key, size_t n) {
  auto o = std::make_shared<CachedObject>();
  o->meta.key = key;
  o->body.assign(n, 'x');
  return o;
}

TEST(HotSetTest, KeepsTheMostRecentlyUsedWithinItsBudget) {
  HotSet set(3 * (1000 + 1 + 512));  // room for three 1000-byte objects
  set.Put(Obj("a", 1000));
  set.Put(Obj("b", 1000));
  set.Put(Obj("c", 1000));
  ASSERT_NE(set.Get("a"), nullptr);  // a is now more recent than b
  set.Put(Obj("d", 1000));
  EXPECT_EQ(set.Get("b"), nullptr);
  EXPECT_NE(set.Get("a"), nullptr);
  EXPECT_NE(set.Get("c"), nullptr);
  EXPECT_NE(set.Get("d"), nullptr);
  EXPECT_EQ(set.entries(), 3u);
}

TEST(HotSetTest, ReplacingAndRemovingKeepTheAccountExact) {
  HotSet set(1 << 20);
  set.Put(Obj("a", 100));
  set.Put(Obj("a", 200));
  EXPECT_EQ(set.Get("a")->body.size(), 200u);
  EXPECT_EQ(set.bytes(), 200u + 1 + 512);
  set.Remove("a");
  set.Remove("never");
  EXPECT_EQ(set.bytes(), 0u);
  EXPECT_EQ(set.entries(), 0u);
}

TEST(HotSetTest, AnObjectLargerThanTheBudgetIsNotKept) {
  HotSet set(1000);
  set.Put(Obj("small", 100));
  set.Put(Obj("huge", 5000));
  EXPECT_EQ(set.Get("huge"), nullptr);
  EXPECT_NE(set.Get("small"), nullptr);
}

TEST(HotSetTest, AReaderKeepsItsObjectAfterEviction) {
  HotSet set(1000);
  set.Put(Obj("a", 400));
  auto held = set.Get("a");
  set.Put(Obj("b", 400));  // evicts a
  EXPECT_EQ(set.Get("a"), nullptr);
  EXPECT_EQ(held->body.size(), 400u);
}

}  // namespace
}  // namespace ferry::cache
