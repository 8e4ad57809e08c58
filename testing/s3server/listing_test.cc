#include "listing.h"
#include "listing_test_util.h"

#include <gtest/gtest.h>

namespace ferry::s3server {
namespace {

// Pages through a V2 listing the way a client does; returns every key and
// common prefix in order ("P:" marks prefixes).
std::vector<std::string> ListAll(const KeyIndex& index, ListParams params) {
  std::vector<std::string> out;
  std::string token;
  for (int page = 0; page < 10000; ++page) {
    ListParams p = params;
    if (!token.empty()) {
      auto decoded = DecodeContinuationToken(token);
      EXPECT_TRUE(decoded.ok());
      p.prefix_after = *decoded;
      p.after = std::max(p.after, *decoded);
    }
    ListResult r = ListKeys(index, p);
    EXPECT_LE(static_cast<int>(r.objects.size() + r.common_prefixes.size()), params.max_keys);
    // Contents and prefixes interleave by order.
    size_t i = 0, j = 0;
    while (i < r.objects.size() || j < r.common_prefixes.size()) {
      if (j == r.common_prefixes.size() ||
          (i < r.objects.size() && r.objects[i].key < r.common_prefixes[j])) {
        out.push_back(r.objects[i++].key);
      } else {
        out.push_back("P:" + r.common_prefixes[j++]);
      }
    }
    if (!r.truncated) break;
    token = EncodeContinuationToken(r.last_item);
  }
  return out;
}

const std::vector<std::string> kOddKeys = {
    "",  // never stored in practice; excluded below
    "a", "a b", "a+b", "a%2Fb", "a/", "a//b", "a/b", "a/b/", "a/b/c", "a/c",
    "b/\xc3\xa9t\xc3\xa9", "b/\xe2\x82\xac", "c\x01", std::string(1024, 'z'),
};

KeyIndex OddIndex() {
  std::vector<std::string> keys(kOddKeys.begin() + 1, kOddKeys.end());
  return IndexOf(keys);
}

TEST(ListKeys, FlatListingIsByteOrdered) {
  KeyIndex index = OddIndex();
  ListParams p;
  ListResult r = ListKeys(index, p);
  EXPECT_FALSE(r.truncated);
  std::vector<std::string> want(kOddKeys.begin() + 1, kOddKeys.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(KeysOf(r), want);
}

TEST(ListKeys, DelimiterRollsUpCommonPrefixes) {
  KeyIndex index = OddIndex();
  ListParams p;
  p.delimiter = "/";
  ListResult r = ListKeys(index, p);
  EXPECT_EQ(KeysOf(r), (std::vector<std::string>{"a", "a b", "a%2Fb", "a+b", "c\x01",
                                               std::string(1024, 'z')}));
  EXPECT_EQ(r.common_prefixes, (std::vector<std::string>{"a/", "b/"}));

  p.prefix = "a/";
  r = ListKeys(index, p);
  EXPECT_EQ(KeysOf(r), (std::vector<std::string>{"a/", "a/b", "a/c"}));
  EXPECT_EQ(r.common_prefixes, (std::vector<std::string>{"a//", "a/b/"}));
  // With prefix "a/b", "a/b" is a key and "a/b/" a common prefix.
  p.prefix = "a/b";
  r = ListKeys(index, p);
  EXPECT_EQ(KeysOf(r), (std::vector<std::string>{"a/b"}));
  EXPECT_EQ(r.common_prefixes, (std::vector<std::string>{"a/b/"}));
}

TEST(ListKeys, MultiCharacterDelimiter) {
  KeyIndex index = IndexOf({"x--1", "x--2", "x-3", "y"});
  ListParams p;
  p.delimiter = "--";
  ListResult r = ListKeys(index, p);
  EXPECT_EQ(KeysOf(r), (std::vector<std::string>{"x-3", "y"}));
  EXPECT_EQ(r.common_prefixes, (std::vector<std::string>{"x--"}));
}

TEST(ListKeys, StartAfterIsExclusive) {
  KeyIndex index = IndexOf({"a", "b", "c"});
  ListParams p;
  p.after = "a";
  EXPECT_EQ(KeysOf(ListKeys(index, p)), (std::vector<std::string>{"b", "c"}));
  p.after = "bb";
  EXPECT_EQ(KeysOf(ListKeys(index, p)), (std::vector<std::string>{"c"}));
  p.after = "c";
  EXPECT_TRUE(ListKeys(index, p).objects.empty());
}

TEST(ListKeys, TruncationOnlyWhenMoreRemain) {
  KeyIndex index = IndexOf({"a", "b", "c"});
  ListParams p;
  p.max_keys = 3;
  EXPECT_FALSE(ListKeys(index, p).truncated);
  p.max_keys = 2;
  ListResult r = ListKeys(index, p);
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(r.last_item, "b");
  p.max_keys = 0;
  r = ListKeys(index, p);
  EXPECT_TRUE(r.objects.empty());
  EXPECT_FALSE(r.truncated);
}

TEST(ListKeys, TruncationIgnoresKeysOfTheLastCommonPrefix) {
  KeyIndex index = IndexOf({"a/1", "a/2", "a/3"});
  ListParams p;
  p.delimiter = "/";
  p.max_keys = 1;
  ListResult r = ListKeys(index, p);
  EXPECT_EQ(r.common_prefixes, (std::vector<std::string>{"a/"}));
  EXPECT_FALSE(r.truncated);
}

TEST(ListKeys, PagingVisitsEverythingOnceForEveryPageSize) {
  KeyIndex index = OddIndex();
  for (std::string delimiter : {"", "/", "b"}) {
    ListParams all;
    all.delimiter = delimiter;
    std::vector<std::string> want = ListAll(index, all);
    for (int max_keys = 1; max_keys <= 15; ++max_keys) {
      ListParams p;
      p.delimiter = delimiter;
      p.max_keys = max_keys;
      EXPECT_EQ(ListAll(index, p), want) << "delimiter '" << delimiter << "' max " << max_keys;
    }
  }
}

TEST(ListKeys, PagingWithPrefixAndStartAfter) {
  KeyIndex index = OddIndex();
  ListParams p;
  p.prefix = "a";
  p.delimiter = "/";
  p.after = "a b";
  p.max_keys = 1;
  EXPECT_EQ(ListAll(index, p), (std::vector<std::string>{"a%2Fb", "a+b", "P:a/"}));
}

TEST(ContinuationToken, RoundTripAndRejectsForeignTokens) {
  std::string odd = "a/\xff\x01 +%";
  auto back = DecodeContinuationToken(EncodeContinuationToken(odd));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, odd);
  EXPECT_FALSE(DecodeContinuationToken("not base64!").ok());
  EXPECT_FALSE(DecodeContinuationToken("aGVsbG8=").ok());  // "hello": no magic
}

}  // namespace
}  // namespace ferry::s3server
