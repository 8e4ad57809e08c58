#include "migrate/range_split.h"

#include <gtest/gtest.h>

#include <set>

namespace ferry::migrate {
namespace {

// ListObjectsV2 (flat) over a key set, counting calls.
struct FakeList {
  std::set<std::string> keys;
  int calls = 0;
  bool ignore_start_after = false;
  ListFn Fn() {
    return [this](const ListOptions& o) -> Result<ListPage> {
      ++calls;
      ListPage page;
      auto it = ignore_start_after ? keys.lower_bound(o.prefix) : keys.upper_bound(o.start_after);
      for (; it != keys.end() && static_cast<int>(page.objects.size()) < o.max_keys; ++it) {
        if (it->compare(0, o.prefix.size(), o.prefix) != 0) {
          if (*it > o.prefix) break;
          continue;
        }
        ObjectInfo info;
        info.key = *it;
        page.objects.push_back(info);
      }
      return page;
    };
  }
};

std::string Numbered(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "p00/d0/o%08d", i);
  return buf;
}

TEST(RangeSplitTest, NumberedKeysSplitNearTheMiddleInAFewProbes) {
  FakeList f;
  for (int i = 0; i < 200000; ++i) f.keys.insert(Numbered(i));
  f.keys.insert("p01/d0/o00000000");
  auto s = FindSplit(f.Fn(), "", Numbered(1999), "p01/");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_TRUE(s->at) << "no split after " << s->probes << " probes";
  EXPECT_EQ(*s->at, "p00/d0/o001");
  EXPECT_LE(s->probes, 6);
  size_t above = std::distance(f.keys.upper_bound(*s->at), f.keys.upper_bound("p01/"));
  EXPECT_EQ(above, 100000u) << "the thief takes the top half";
}

TEST(RangeSplitTest, KeysUnlikeTheCursorFallBackToBisection) {
  FakeList f;
  for (const char* k : {"a/zzz", "b/1", "m/1", "x/1"}) f.keys.insert(k);
  auto s = FindSplit(f.Fn(), "", "a/zzz", "");
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->at);
  EXPECT_GT(*s->at, "a/zzz");
  EXPECT_NE(f.keys.upper_bound(*s->at), f.keys.end());
}

TEST(RangeSplitTest, NothingAboveTheCursorIsNoSplit) {
  FakeList f;
  for (int i = 0; i < 100; ++i) f.keys.insert(Numbered(i));
  auto s = FindSplit(f.Fn(), "p00/", Numbered(99), "");
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->at);
  EXPECT_TRUE(s->disorder.empty());
}

TEST(RangeSplitTest, AProbeThatIgnoresStartAfterIsADisorder) {
  FakeList f;
  for (int i = 0; i < 100; ++i) f.keys.insert(Numbered(i));
  f.ignore_start_after = true;
  auto s = FindSplit(f.Fn(), "p00/", Numbered(10), "");
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->at);
  EXPECT_NE(s->disorder.find("start-after"), std::string::npos) << s->disorder;
}

}  // namespace
}  // namespace ferry::migrate
