#include "gateway/list_merge.h"

#include <gtest/gtest.h>

namespace ferry::gateway {
namespace {

SideListing Side(std::vector<std::string> keys, bool truncated = false,
                 std::vector<std::string> prefixes = {}, const std::string& etag = "") {
  SideListing s;
  for (auto& k : keys) {
    ObjectInfo o;
    o.key = k;
    o.etag = etag.empty() ? "e-" + k : etag;
    s.objects.push_back(o);
  }
  s.prefixes = std::move(prefixes);
  s.truncated = truncated;
  return s;
}

std::vector<std::string> Names(const MergedListing& m) {
  std::vector<std::string> out;
  for (const auto& o : m.objects) out.push_back(o.key);
  for (const auto& p : m.prefixes) out.push_back(p);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ListMergeTest, UnionOfBothSidesWithTheDestinationsEntryForAKeyInBoth) {
  SideListing dst = Side({"a", "c"}, false, {}, "dst");
  SideListing src = Side({"b", "c", "d"}, false, {}, "src");
  MergedListing m = MergeListings(dst, &src, {}, 1000);
  EXPECT_EQ(Names(m), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_FALSE(m.truncated);
  EXPECT_EQ(m.objects[2].key, "c");
  EXPECT_EQ(m.objects[2].etag, "dst");
  EXPECT_EQ(m.objects[1].etag, "src");
}

TEST(ListMergeTest, KeysDeletedThroughTheGatewayAreLeftOut) {
  SideListing dst = Side({"a"});
  SideListing src = Side({"a", "gone", "z"});
  MergedListing m = MergeListings(dst, &src, {"gone"}, 1000);
  EXPECT_EQ(Names(m), (std::vector<std::string>{"a", "z"}));
  // Deleted at the source side only: a key written again since is listed.
  SideListing rewritten = Side({"gone"});
  m = MergeListings(rewritten, &src, {"gone"}, 1000);
  EXPECT_EQ(Names(m), (std::vector<std::string>{"a", "gone", "z"}));
}

// The source's page ended at "c": the destination's "d" and "e" may have
// source keys before them, so the page stops at "c" and the next starts
// after it. Nothing is skipped across pages.
TEST(ListMergeTest, APageStopsWhereATruncatedSideStopped) {
  SideListing dst = Side({"a", "d", "e"});
  SideListing src = Side({"b", "c"}, true);
  MergedListing m = MergeListings(dst, &src, {}, 1000);
  EXPECT_EQ(Names(m), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(m.truncated);
  EXPECT_EQ(m.next_after, "c");
  // Both sides ending exactly at the page's end: still more to ask for.
  SideListing dst2 = Side({"a"}, true);
  SideListing src2 = Side({"a"}, true);
  m = MergeListings(dst2, &src2, {}, 1000);
  EXPECT_TRUE(m.truncated);
  EXPECT_EQ(m.next_after, "a");
}

TEST(ListMergeTest, MaxKeysCutsThePageAndPrefixesCountAsItems) {
  SideListing dst = Side({"a", "c"}, false, {"p/"});
  SideListing src = Side({"b"}, false, {"p/", "q/"});
  MergedListing m = MergeListings(dst, &src, {}, 3);
  EXPECT_EQ(Names(m), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(m.truncated);
  EXPECT_EQ(m.next_after, "c");
  // A page that ends with a common prefix goes on past every key under it.
  m = MergeListings(dst, &src, {}, 4);
  EXPECT_EQ(m.prefixes, std::vector<std::string>{"p/"});
  EXPECT_TRUE(m.truncated);
  EXPECT_EQ(m.next_after, "p/\xff");
  m = MergeListings(dst, &src, {}, 10);
  EXPECT_EQ(m.prefixes, (std::vector<std::string>{"p/", "q/"}));
  EXPECT_FALSE(m.truncated);
  EXPECT_EQ(m.next_after, "");
}

TEST(ListMergeTest, TheDestinationAloneOnceTheJobIsDone) {
  SideListing dst = Side({"a", "b"}, true);
  MergedListing m = MergeListings(dst, nullptr, {"a"}, 1000);
  EXPECT_EQ(Names(m), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(m.truncated);
  EXPECT_EQ(m.next_after, "b");
}

}  // namespace
}  // namespace ferry::gateway
