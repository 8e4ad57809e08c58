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

// A fake that also answers delimiter listings (common prefixes).
TEST(RangeSplitTest, FewPrefixesAtTheTopAreListedOneLevelDeeper) {
  std::set<std::string> keys;
  for (int d = 0; d < 256; ++d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "p/d%03d/o1", d);
    keys.insert(buf);
  }
  keys.insert("big/0");
  int calls = 0;
  ListFn list = [&](const ListOptions& o) -> Result<ListPage> {
    ++calls;
    ListPage page;
    for (const auto& k : keys) {
      if (k.compare(0, o.prefix.size(), o.prefix) != 0) continue;
      size_t d = k.find('/', o.prefix.size());
      if (d == std::string::npos) continue;
      std::string cp = k.substr(0, d + 1);
      if (page.common_prefixes.empty() || page.common_prefixes.back() != cp) {
        page.common_prefixes.push_back(cp);
      }
    }
    return page;
  };
  auto points = PrefixSplitPoints(list, "", "", "", 64);
  ASSERT_TRUE(points.ok());
  EXPECT_EQ(points->bounds.size(), 64u);
  EXPECT_EQ(calls, 3) << "the top, then big/ and p/";
  EXPECT_EQ(points->bounds.front().substr(0, 3), "p/d");
}

TEST(RangeSplitTest, KnownKeysFindWhatAListingSkipped) {
  KnownKeys known;
  known.Add({"p/d000.txt", "p/e", "q"});
  auto objs = [](std::vector<std::string> keys) {
    std::vector<ObjectInfo> out;
    for (auto& k : keys) {
      ObjectInfo o;
      o.key = k;
      out.push_back(o);
    }
    return out;
  };
  // s3rver's walk: "p/d000/..." first; the page passes p/d000.txt without it.
  auto page = objs({"p/d000/o1", "p/d000/o2"});
  EXPECT_EQ(known.FirstSkipped("", "p/d000/o2", page, 2), "p/d000.txt");
  // A page that holds it, and one that stops before it.
  EXPECT_EQ(known.FirstSkipped("", "p/d000/o2", objs({"p/d000.txt", "p/d000/o1"}), 2), "");
  EXPECT_EQ(known.FirstSkipped("", "p/c", objs({"p/a", "p/b"}), 2), "");
  // Through the end of the range ("" = no bound): every known key above.
  EXPECT_EQ(known.FirstSkipped("p/d000.txt", "", objs({"p/e"}), 1), "q");
  known.Forget("q");
  EXPECT_EQ(known.FirstSkipped("p/d000.txt", "", objs({"p/e"}), 1), "");
  known.Saw("p/e");
  EXPECT_EQ(known.Unseen(), (std::vector<std::string>{"p/d000.txt"}));
}

}  // namespace
}  // namespace ferry::migrate
