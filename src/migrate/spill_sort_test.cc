#include "migrate/spill_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>

namespace ferry::migrate {
namespace {

std::vector<SpillRecord> Drain(SpillSorter& s) {
  std::vector<SpillRecord> out;
  for (;;) {
    auto r = s.Next();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok() || !*r) return out;
    out.push_back(std::move(**r));
  }
}

TEST(SpillSortTest, SortsAcrossRunsStablyAndLeavesNoFiles) {
  char tmpl[] = "/tmp/ferry-spill-test.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::vector<SpillRecord> in;
  std::mt19937 rng(3);
  for (int i = 0; i < 10'000; ++i) {
    in.push_back({"k" + std::to_string(rng() % 3000), std::to_string(i)});
  }
  in.push_back({"", "empty key"});
  in.push_back({std::string("\xff\x01z", 3), std::string("bin\0ary", 7)});
  {
    SpillSorter s(tmpl, 777);
    for (const auto& r : in) ASSERT_TRUE(s.Add(r).ok());
    EXPECT_EQ(s.count(), in.size());
    EXPECT_EQ(s.runs(), in.size() / 777);
    auto got = Drain(s);
    std::vector<SpillRecord> want = in;
    std::stable_sort(want.begin(), want.end(),
                     [](const auto& a, const auto& b) { return a.key < b.key; });
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].key, want[i].key) << i;
      ASSERT_EQ(got[i].payload, want[i].payload) << i << " (equal keys keep their order)";
    }
    EXPECT_TRUE(std::filesystem::is_empty(tmpl)) << "run files are unlinked at once";
  }
  std::filesystem::remove_all(tmpl);
}

TEST(SpillSortTest, InMemoryOnlyAndEmpty) {
  SpillSorter empty;
  auto none = empty.Next();
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none);
  SpillSorter small;
  ASSERT_TRUE(small.Add({"b", "2"}).ok());
  ASSERT_TRUE(small.Add({"a", "1"}).ok());
  auto got = Drain(small);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].key, "a");
  EXPECT_EQ(small.runs(), 0u);
  EXPECT_FALSE(small.Add({"c", ""}).ok()) << "no adding once reading began";
}

TEST(SpillSortTest, AnUnwritableDirectoryIsAClearError) {
  SpillSorter s("/nonexistent/ferry", 1);
  Status st = s.Add({"a", ""});
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.ToString().find("/nonexistent/ferry"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace ferry::migrate
