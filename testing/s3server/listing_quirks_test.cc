#include "listing_quirks.h"
#include "listing_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace ferry::s3server {
namespace {

std::vector<std::string> AllKeys(const KeyIndex& index) {
  std::vector<std::string> out;
  for (const auto& [key, record] : index) out.push_back(key);
  return out;
}

// Walk order as listing_quirks.h defines it, written out segment by
// segment: the reference WalkKey is checked against.
bool ReferenceWalkLess(const std::string& a, const std::string& b) {
  auto split = [](const std::string& key) {
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t slash; (slash = key.find('/', start)) != std::string::npos; start = slash + 1) {
      parts.push_back(key.substr(start, slash - start));
    }
    parts.push_back(key.substr(start) + "._S3rver_object");  // the file
    return parts;
  };
  std::vector<std::string> pa = split(a), pb = split(b);
  for (size_t i = 0;; ++i) {
    bool a_file = i + 1 == pa.size(), b_file = i + 1 == pb.size();
    if (pa[i] != pb[i]) return pa[i] < pb[i];  // std::string compares unsigned bytes
    if (a_file || b_file) return a_file && !b_file;
  }
}

// Keys whose walk order differs from byte order in every way we know of.
const std::vector<std::string> kWalkKeys = {
    "/",
    "//",
    "a",
    "a/",
    "a//b",
    "a/b",
    "a/b/c",
    "a/d",
    "a b",
    "x",
    "x/",
    "x/1",
    "x/y/z",
    "x-1",
    "x.txt",
    "x!",
    "x.a",
    "x0",
    "x._a",
    "x._S",
    "x._S3rver_object",
    "x._S3rver_object/y",
    "x._T",
    std::string("a\0b", 3),
    std::string("a\0/b", 4),
    std::string("a/\0", 3),
    "\x01",
    "\xff",
    "\xc3\xa9",
    "\xe2\x82\xac",
    "A",
    "Z",
    "_",
    "~",
};

std::vector<std::string> InWalkOrder(std::vector<std::string> keys) {
  std::sort(keys.begin(), keys.end(),
            [](const std::string& a, const std::string& b) { return WalkKey(a) < WalkKey(b); });
  return keys;
}

TEST(ListQuirks, NamesParseAndPrint) {
  ListQuirks q;
  EXPECT_FALSE(q.any());
  EXPECT_TRUE(AddListQuirk("unordered", &q).ok());
  EXPECT_TRUE(AddListQuirk("forget-prefixes", &q).ok());
  EXPECT_TRUE(q.unordered && q.forget_prefixes && !q.ignore_start_after);
  EXPECT_EQ(ListQuirkNames(q), (std::vector<std::string_view>{"forget-prefixes", "unordered"}));
  ListQuirks before = q;
  EXPECT_FALSE(AddListQuirk("sorted", &q).ok());
  EXPECT_EQ(q, before);
  EXPECT_TRUE(AddListQuirk("ignore-start-after", &q).ok());
  EXPECT_EQ(ListQuirkNames(q).size(), 3u);
}

TEST(WalkOrder, MatchesS3rver) {
  // Listings recorded from s3rver 3.7 (its FilesystemStore on Node 20,
  // libuv 1.46), the keys PUT in another order.
  EXPECT_EQ(
      InWalkOrder({"x", "x/1", "x-1", "x.txt", "x!", "x.a", "x0", "x._a", "x/y/z", "a/b/c", "a/d"}),
      (std::vector<std::string>{"a/b/c", "a/d", "x/1", "x/y/z", "x!", "x-1", "x", "x._a", "x.a",
                                "x.txt", "x0"}));
  EXPECT_EQ(
      InWalkOrder({"\xc3\xa9", "z", "Z", "a", "\xe2\x82\xac", "_", "~", "a b", "A"}),
      (std::vector<std::string>{"A", "Z", "_", "a b", "a", "z", "~", "\xc3\xa9", "\xe2\x82\xac"}));
}

TEST(WalkOrder, WalkKeyOrderIsTheSegmentOrder) {
  for (const auto& a : kWalkKeys) {
    EXPECT_EQ(KeyFromWalkKey(WalkKey(a)), a);
    for (const auto& b : kWalkKeys) {
      EXPECT_EQ(WalkKey(a) < WalkKey(b), ReferenceWalkLess(a, b)) << "'" << a << "' '" << b << "'";
    }
  }
}

TEST(WalkOrder, WalkPrefixCoversEveryKeyUnderThePrefix) {
  for (const auto& key : kWalkKeys) {
    for (size_t n = 0; n <= key.size(); ++n) {
      std::string prefix = key.substr(0, n);
      EXPECT_EQ(WalkKey(key).rfind(WalkPrefix(prefix), 0), 0u) << key << " " << prefix;
    }
  }
  // The one kind of key in the range that is not under the prefix: its file
  // name runs into "._S3rver_object".
  EXPECT_EQ(WalkKey("x").rfind(WalkPrefix("x._S"), 0), 0u);
}

TEST(ByteOrderParams, MeansWhatS3Says) {
  struct Case {
    bool v2;
    std::string start_after;
    std::optional<std::string> token;
    std::string want_after, want_prefix_after;
  };
  for (const Case& c : std::vector<Case>{
           {true, "", std::nullopt, "", ""},
           {true, "b", std::nullopt, "b", ""},
           {true, "", "c/", "c/", "c/"},
           {true, "b", "c/", "c/", "c/"},
           {true, "d", "c/", "d", "c/"},
           {false, "m/", std::nullopt, "m/", "m/"},
       }) {
    ListRequest r;
    r.v2 = c.v2;
    r.start_after = c.start_after;
    r.token = c.token;
    ListParams p = ByteOrderParams(r);
    EXPECT_EQ(p.after, c.want_after) << c.start_after;
    EXPECT_EQ(p.prefix_after, c.want_prefix_after) << c.start_after;
  }
}

// What a client saw, all pages together.
struct Seen {
  std::vector<std::string> keys;
  std::vector<std::string> prefixes;
};

enum class Paging { kToken, kStartAfterLastKey, kMarker };

// Pages through `request` as a client does: with continuation tokens (V2),
// with start-after = the last key seen (V2, a client that does not trust
// tokens), or with V1 markers (NextMarker).
Seen PageThrough(const KeyIndex& index, ListRequest request, ListQuirks quirks, Paging paging) {
  WalkIndex walk(index);
  request.v2 = paging != Paging::kMarker;
  Seen seen;
  for (int page = 0; page < 1000; ++page) {
    ListResult r = ListWithQuirks(index, &walk, request, quirks);
    EXPECT_LE(static_cast<int>(r.objects.size() + r.common_prefixes.size()), request.max_keys);
    for (const auto& o : r.objects) seen.keys.push_back(o.key);
    for (const auto& p : r.common_prefixes) seen.prefixes.push_back(p);
    if (!r.truncated) return seen;
    switch (paging) {
      case Paging::kToken: {
        auto token = DecodeContinuationToken(EncodeContinuationToken(r.resume_after));
        EXPECT_TRUE(token.ok());
        request.token = *token;
        break;
      }
      case Paging::kStartAfterLastKey:
        if (!r.objects.empty()) request.start_after = r.objects.back().key;
        break;
      case Paging::kMarker:
        request.start_after = r.last_item;
        break;
    }
  }
  ADD_FAILURE() << "listing never ended";
  return seen;
}

ListQuirks Quirks(std::initializer_list<std::string_view> names) {
  ListQuirks q;
  for (auto name : names) EXPECT_TRUE(AddListQuirk(name, &q).ok());
  return q;
}

TEST(ListWithQuirks, WithoutQuirksIsTheByteOrderedListing) {
  KeyIndex index = IndexOf(kWalkKeys);
  for (std::string delimiter : {"", "/"}) {
    ListRequest r;
    r.delimiter = delimiter;
    r.start_after = "a";
    r.max_keys = 7;
    ListResult got = ListWithQuirks(index, nullptr, r, {});
    ListResult want = ListKeys(index, ByteOrderParams(r));
    EXPECT_EQ(KeysOf(got), KeysOf(want));
    EXPECT_EQ(got.common_prefixes, want.common_prefixes);
    EXPECT_EQ(got.resume_after, want.last_item);
  }
}

// --- forget-prefixes ---

// Common prefixes a and c have a key directly under them; b has none.
const std::vector<std::string> kTree = {"a/1", "b/c/d", "b/e/f", "c/x/y", "c/z", "d"};

TEST(ForgetPrefixes, LeavesOutPrefixesWithNoKeyDirectlyUnder) {
  KeyIndex index = IndexOf(kTree);
  ListRequest r;
  r.delimiter = "/";
  ListResult normal = ListWithQuirks(index, nullptr, r, {});
  EXPECT_EQ(normal.common_prefixes, (std::vector<std::string>{"a/", "b/", "c/"}));
  ListResult forgot = ListWithQuirks(index, nullptr, r, Quirks({"forget-prefixes"}));
  EXPECT_EQ(forgot.common_prefixes, (std::vector<std::string>{"a/", "c/"}));
  EXPECT_EQ(KeysOf(forgot), (std::vector<std::string>{"d"}));
  // One level down the prefixes have keys directly under them.
  r.prefix = "b/";
  forgot = ListWithQuirks(index, nullptr, r, Quirks({"forget-prefixes"}));
  EXPECT_EQ(forgot.common_prefixes, (std::vector<std::string>{"b/c/", "b/e/"}));
  // A flat listing is complete.
  r = ListRequest{};
  EXPECT_EQ(KeysOf(ListWithQuirks(index, nullptr, r, Quirks({"forget-prefixes"}))), kTree);
}

TEST(ForgetPrefixes, ATreeWalkingClientLosesKeys) {
  KeyIndex index = IndexOf(kTree);
  // A client that lists a tree one level at a time, descending into each
  // common prefix.
  auto walk_tree = [&](ListQuirks quirks) {
    std::vector<std::string> keys, todo = {""};
    while (!todo.empty()) {
      ListRequest r;
      r.prefix = todo.back();
      r.delimiter = "/";
      todo.pop_back();
      Seen seen = PageThrough(index, r, quirks, Paging::kToken);
      keys.insert(keys.end(), seen.keys.begin(), seen.keys.end());
      todo.insert(todo.end(), seen.prefixes.begin(), seen.prefixes.end());
    }
    std::sort(keys.begin(), keys.end());
    return keys;
  };
  EXPECT_EQ(walk_tree({}), kTree);
  EXPECT_EQ(walk_tree(Quirks({"forget-prefixes"})),
            (std::vector<std::string>{"a/1", "c/x/y", "c/z", "d"}));  // b/c/d, b/e/f lost
}

TEST(ForgetPrefixes, PagesAgreeWithOneListingAndEndWithoutAForgottenPrefix) {
  KeyIndex index = IndexOf({"a/1", "b/c/d", "c/x/y", "c/z", "d", "e/f/g", "e/f/h", "e/i"});
  for (ListQuirks quirks :
       {Quirks({"forget-prefixes"}), Quirks({"forget-prefixes", "unordered"})}) {
    ListRequest r;
    r.delimiter = "/";
    Seen all = PageThrough(index, r, quirks, Paging::kToken);
    EXPECT_EQ(all.prefixes, (std::vector<std::string>{"a/", "c/", "e/"}));
    for (int max_keys = 1; max_keys <= 5; ++max_keys) {
      r.max_keys = max_keys;
      for (Paging paging : {Paging::kToken, Paging::kMarker}) {
        Seen paged = PageThrough(index, r, quirks, paging);
        EXPECT_EQ(paged.keys, all.keys) << max_keys;
        EXPECT_EQ(paged.prefixes, all.prefixes) << max_keys;
      }
    }
  }
  // Nothing left to list after "a" but a forgotten prefix: not truncated.
  ListRequest r;
  r.delimiter = "/";
  r.max_keys = 1;
  ListResult last = ListWithQuirks(IndexOf({"a", "b/c/d"}), nullptr, r, Quirks({"forget-prefixes"}));
  EXPECT_EQ(KeysOf(last), (std::vector<std::string>{"a"}));
  EXPECT_FALSE(last.truncated);
}

TEST(ForgetPrefixes, WithUnorderedMatchesS3rver) {
  // s3rver 3.7's answer to delimiter=/ over these keys (recorded): the keys
  // in its walk order, common prefixes a/ and x/, no b/.
  KeyIndex index = IndexOf(
      {"x", "x/1", "x-1", "x.txt", "x!", "x.a", "x0", "x._a", "x/y/z", "a/b/c", "a/d", "b/c/d"});
  WalkIndex walk(index);
  ListRequest r;
  r.delimiter = "/";
  ListResult got = ListWithQuirks(index, &walk, r, Quirks({"forget-prefixes", "unordered"}));
  EXPECT_EQ(KeysOf(got), (std::vector<std::string>{"x!", "x-1", "x", "x._a", "x.a", "x.txt", "x0"}));
  EXPECT_EQ(got.common_prefixes, (std::vector<std::string>{"a/", "x/"}));
}

// --- ignore-start-after ---

TEST(IgnoreStartAfter, StartAfterIsIgnoredTokensAndMarkersAreNot) {
  KeyIndex index = IndexOf({"a", "b", "c"});
  ListQuirks quirks = Quirks({"ignore-start-after"});
  ListRequest r;
  r.start_after = "b";
  EXPECT_EQ(KeysOf(ListWithQuirks(index, nullptr, r, {})), (std::vector<std::string>{"c"}));
  EXPECT_EQ(KeysOf(ListWithQuirks(index, nullptr, r, quirks)),
            (std::vector<std::string>{"a", "b", "c"}));
  r.v2 = false;  // a V1 marker
  EXPECT_EQ(KeysOf(ListWithQuirks(index, nullptr, r, quirks)), (std::vector<std::string>{"c"}));

  // Paging with tokens is complete; paging with start-after never gets past
  // the first page (the test's client gives up after 1000 pages).
  r = ListRequest{};
  r.max_keys = 1;
  EXPECT_EQ(PageThrough(index, r, quirks, Paging::kToken).keys, AllKeys(index));
  r.start_after = "a";
  ListResult second = ListWithQuirks(index, nullptr, r, quirks);
  EXPECT_EQ(KeysOf(second), (std::vector<std::string>{"a"}));  // the first page again
  EXPECT_TRUE(second.truncated);
}

// --- unordered ---

TEST(Unordered, FlatListingIsInWalkOrder) {
  KeyIndex index = IndexOf(kWalkKeys);
  WalkIndex walk(index);
  ListRequest r;
  ListResult got = ListWithQuirks(index, &walk, r, Quirks({"unordered"}));
  EXPECT_EQ(KeysOf(got), InWalkOrder(kWalkKeys));
  EXPECT_NE(KeysOf(got), AllKeys(index));
  EXPECT_FALSE(got.truncated);
}

TEST(Unordered, TokensListEveryKeyOnceStartAfterLastKeyLosesKeys) {
  // Walk order: x/1 (directory x first), x-1.
  KeyIndex index = IndexOf({"x-1", "x/1"});
  ListQuirks quirks = Quirks({"unordered"});
  ListRequest r;
  r.max_keys = 1;
  EXPECT_EQ(PageThrough(index, r, quirks, Paging::kToken).keys,
            (std::vector<std::string>{"x/1", "x-1"}));
  // Page 2 asks for keys > "x/1": "x-1" is smaller, so it is never listed.
  EXPECT_EQ(PageThrough(index, r, quirks, Paging::kStartAfterLastKey).keys,
            (std::vector<std::string>{"x/1"}));
  EXPECT_EQ(PageThrough(index, r, quirks, Paging::kMarker).keys, (std::vector<std::string>{"x/1"}));

  // Tokens: every page size over the odd keys.
  index = IndexOf(kWalkKeys);
  std::vector<std::string> want = InWalkOrder(kWalkKeys);
  for (int max_keys = 1; max_keys <= static_cast<int>(kWalkKeys.size()); ++max_keys) {
    r.max_keys = max_keys;
    EXPECT_EQ(PageThrough(index, r, quirks, Paging::kToken).keys, want) << max_keys;
  }
  r.max_keys = 1;
  EXPECT_NE(PageThrough(index, r, quirks, Paging::kStartAfterLastKey).keys, want);
}

TEST(Unordered, StartAfterFiltersByBytesOverTheWalk) {
  KeyIndex index = IndexOf({"x", "x/1", "x-1", "x!", "x0", "y"});
  WalkIndex walk(index);
  ListRequest r;
  r.start_after = "x!";
  // Walk order x/1 x! x-1 x x0 y; keys > "x!" in bytes: x/1 x-1 x0 y.
  EXPECT_EQ(KeysOf(ListWithQuirks(index, &walk, r, Quirks({"unordered"}))),
            (std::vector<std::string>{"x/1", "x-1", "x0", "y"}));
  // With a token too, both apply.
  r.token = "x/1";
  EXPECT_EQ(KeysOf(ListWithQuirks(index, &walk, r, Quirks({"unordered"}))),
            (std::vector<std::string>{"x-1", "x0", "y"}));
  // And with ignore-start-after, only the token does.
  EXPECT_EQ(KeysOf(ListWithQuirks(index, &walk, r, Quirks({"unordered", "ignore-start-after"}))),
            (std::vector<std::string>{"x!", "x-1", "x", "x0", "y"}));
}

TEST(Unordered, PrefixSelectsByKey) {
  // "x"'s file, x._S3rver_object, sits in the walk range of prefix "x._S".
  KeyIndex index = IndexOf({"x", "x._Sa", "x._T", "x/1"});
  WalkIndex walk(index);
  ListRequest r;
  r.prefix = "x._S";
  EXPECT_EQ(KeysOf(ListWithQuirks(index, &walk, r, Quirks({"unordered"}))),
            (std::vector<std::string>{"x._Sa"}));
  r.prefix = "x";
  EXPECT_EQ(KeysOf(ListWithQuirks(index, &walk, r, Quirks({"unordered"}))),
            (std::vector<std::string>{"x/1", "x", "x._Sa", "x._T"}));
}

TEST(Unordered, DelimitedListingsFollowTheWalkAndPageCompletely) {
  KeyIndex index = IndexOf(kWalkKeys);
  ListQuirks quirks = Quirks({"unordered"});
  for (std::string delimiter : {"/", "_", "x"}) {
    ListRequest r;
    r.delimiter = delimiter;
    Seen all = PageThrough(index, r, quirks, Paging::kToken);
    // The same keys and prefixes as in byte order, each once, in walk order.
    Seen bytes = PageThrough(index, r, {}, Paging::kToken);
    EXPECT_EQ(all.keys, InWalkOrder(bytes.keys)) << delimiter;
    std::vector<std::string> sorted = all.prefixes;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, bytes.prefixes) << delimiter;
    for (int max_keys = 1; max_keys <= 12; ++max_keys) {
      r.max_keys = max_keys;
      Seen paged = PageThrough(index, r, quirks, Paging::kToken);
      EXPECT_EQ(paged.keys, all.keys) << delimiter << " " << max_keys;
      EXPECT_EQ(paged.prefixes, all.prefixes) << delimiter << " " << max_keys;
    }
  }
}

TEST(Unordered, APrefixIsListedOnceWhereItsFirstKeyIs) {
  // With delimiter "_", common prefix "a._" holds a._A and a._x; the walk
  // puts the file of "a" (a._S3rver_object) between them.
  KeyIndex index = IndexOf({"a", "a._A", "a._x"});
  WalkIndex walk(index);
  ListRequest r;
  r.delimiter = "_";
  ListResult all = ListWithQuirks(index, &walk, r, Quirks({"unordered"}));
  EXPECT_EQ(all.common_prefixes, (std::vector<std::string>{"a._"}));
  EXPECT_EQ(KeysOf(all), (std::vector<std::string>{"a"}));
  // Paged one at a time: the prefix at a._A, then a, and a._x lists nothing.
  r.max_keys = 1;
  ListResult page = ListWithQuirks(index, &walk, r, Quirks({"unordered"}));
  EXPECT_EQ(page.common_prefixes, (std::vector<std::string>{"a._"}));
  EXPECT_EQ(page.resume_after, "a._A");
  r.token = page.resume_after;
  page = ListWithQuirks(index, &walk, r, Quirks({"unordered"}));
  EXPECT_EQ(KeysOf(page), (std::vector<std::string>{"a"}));
  EXPECT_FALSE(page.truncated);
}

TEST(Unordered, WalkIndexFollowsWrites) {
  KeyIndex index = IndexOf({"x-1"});
  WalkIndex walk(index);
  index.merge(IndexOf({"x/1"}));
  walk.Add("x/1");
  walk.Add("x/1");  // twice is once
  ListRequest r;
  EXPECT_EQ(KeysOf(ListWithQuirks(index, &walk, r, Quirks({"unordered"}))),
            (std::vector<std::string>{"x/1", "x-1"}));
  index.erase("x-1");
  walk.Remove("x-1");
  walk.Remove("nothing");
  EXPECT_EQ(walk.walk_keys().size(), 1u);
  EXPECT_EQ(KeysOf(ListWithQuirks(index, &walk, r, Quirks({"unordered"}))),
            (std::vector<std::string>{"x/1"}));
}

}  // namespace
}  // namespace ferry::s3server
