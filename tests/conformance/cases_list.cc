// Conformance cases for List: pagination, prefix, delimiter, start-after,
// continuation tokens and byte order.

#include <chrono>
#include <thread>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "conformance/conformance_util.h"
#include "conformance/store_conformance.h"

namespace ferry::conformance {
namespace {

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST_P(StoreConformanceTest, ListPaginatesOverSeveralPages) {
  std::vector<std::string> keys;
  for (int i = 0; i < 23; ++i) {
    char name[16];
    std::snprintf(name, sizeof(name), "k/%02d", i);
    keys.push_back(K(name));
    PutString(keys.back(), name);
  }
  ListOptions options;
  options.prefix = K("");
  options.max_keys = 5;
  int pages = 0;
  std::vector<std::string> seen;
  for (;;) {
    auto page = store().List(options);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    ++pages;
    ASSERT_LE(page->objects.size(), 5u);
    for (const ObjectInfo& o : page->objects) {
      seen.push_back(o.key);
      EXPECT_EQ(o.size, 4u) << o.key;
    }
    if (!page->truncated) {
      EXPECT_EQ(page->objects.size(), 3u) << "the last page holds the remainder";
      break;
    }
    EXPECT_EQ(page->objects.size(), 5u) << "truncated pages are full";
    ASSERT_FALSE(page->next_continuation_token.empty());
    options.continuation_token = page->next_continuation_token;
    ASSERT_LT(pages, 10);
  }
  EXPECT_EQ(pages, 5);
  EXPECT_EQ(seen, keys);
}

TEST_P(StoreConformanceTest, ListContinuationTokenCanBeReused) {
  for (const char* name : {"a", "b", "c", "d", "e"}) PutString(K(name), name);
  ListOptions options;
  options.prefix = K("");
  options.max_keys = 2;
  auto first = store().List(options);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(first->truncated);
  options.continuation_token = first->next_continuation_token;
  auto again1 = store().List(options);
  auto again2 = store().List(options);
  ASSERT_TRUE(again1.ok() && again2.ok());
  ASSERT_EQ(again1->objects.size(), 2u);
  ASSERT_EQ(again2->objects.size(), 2u);
  EXPECT_EQ(again1->objects[0].key, K("c"));
  EXPECT_EQ(again2->objects[0].key, K("c"));
  EXPECT_EQ(again1->objects[1].key, K("d"));
}

TEST_P(StoreConformanceTest, ListMaxKeysOneAndExactFit) {
  for (const char* name : {"a", "b", "c"}) PutString(K(name), name);
  ListOptions options;
  options.prefix = K("");
  options.max_keys = 1;
  EXPECT_EQ(ListAll(options).keys, (std::vector<std::string>{K("a"), K("b"), K("c")}));
  options.max_keys = 3;
  auto page = store().List(options);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->objects.size(), 3u);
  EXPECT_FALSE(page->truncated) << "a page that holds everything is not truncated";
}

TEST_P(StoreConformanceTest, ListPrefix) {
  for (const char* name : {"x/1", "x/2", "x-", "xy", "y/1", "w"}) PutString(K(name), name);
  ListOptions options;
  options.prefix = K("x/");
  EXPECT_EQ(ListAll(options).keys, (std::vector<std::string>{K("x/1"), K("x/2")}));
  options.prefix = K("x");
  const std::vector<std::string> under_x = {K("x-"), K("x/1"), K("x/2"), K("xy")};
  if (FERRY_HAS_CAPABILITY(list_byte_order)) {
    EXPECT_EQ(ListAll(options).keys, under_x);
  } else {
    EXPECT_EQ(Sorted(ListAll(options).keys), under_x) << "the same keys, in any order";
  }
  options.prefix = K("x/1");
  EXPECT_EQ(ListAll(options).keys, std::vector<std::string>{K("x/1")});
  options.prefix = K("z");
  EXPECT_TRUE(ListAll(options).keys.empty());
  options.prefix = K("");
  EXPECT_EQ(ListAll(options).keys.size(), 6u);
}

TEST_P(StoreConformanceTest, ListDelimiterGivesCommonPrefixes) {
  FERRY_REQUIRE_CAPABILITY(delimiter);
  for (const char* name : {"top1", "top2", "d1/a", "d1/b", "d2/sub/c", "d3/", "e.txt"}) {
    PutString(K(name), name);
  }
  std::vector<std::string> top_prefixes = {K("d1/"), K("d2/"), K("d3/")};
  const bool empty_segments = FERRY_HAS_CAPABILITY(empty_key_segments);
  if (empty_segments) {
    PutString(K("d4//x"), "d4//x");
    top_prefixes.push_back(K("d4/"));
  }
  ListOptions options;
  options.prefix = K("");
  options.delimiter = "/";
  Listing all = ListAll(options);
  EXPECT_EQ(all.keys, (std::vector<std::string>{K("e.txt"), K("top1"), K("top2")}));
  EXPECT_EQ(all.common_prefixes, top_prefixes);

  options.max_keys = 2;  // prefixes and objects share the page budget
  Listing paged = ListAll(options);
  EXPECT_EQ(paged.keys, all.keys);
  EXPECT_EQ(paged.common_prefixes, all.common_prefixes);
  EXPECT_EQ(paged.pages, empty_segments ? 4 : 3);

  options.max_keys = 1000;
  options.prefix = K("d2/");
  all = ListAll(options);
  EXPECT_TRUE(all.keys.empty());
  EXPECT_EQ(all.common_prefixes, std::vector<std::string>{K("d2/sub/")});
  options.prefix = K("d1/");
  all = ListAll(options);
  EXPECT_EQ(all.keys, (std::vector<std::string>{K("d1/a"), K("d1/b")}));
  EXPECT_TRUE(all.common_prefixes.empty());
  options.prefix = K("d3/");
  all = ListAll(options);
  EXPECT_EQ(all.keys, std::vector<std::string>{K("d3/")}) << "a folder marker is an object";
  if (empty_segments) {
    options.prefix = K("d4/");
    all = ListAll(options);
    EXPECT_EQ(all.common_prefixes, std::vector<std::string>{K("d4//")});
  }
  options.prefix = K("d");  // a partial segment
  all = ListAll(options);
  EXPECT_EQ(all.common_prefixes, top_prefixes);
}

TEST_P(StoreConformanceTest, ListDelimiterOtherThanSlash) {
  FERRY_REQUIRE_CAPABILITY(delimiter);
  for (const char* name : {"a-1", "a-2", "b", "c-x/y", "c/z"}) PutString(K(name), name);
  ListOptions options;
  options.prefix = K("");
  options.delimiter = "-";
  Listing all = ListAll(options);
  EXPECT_EQ(all.keys, (std::vector<std::string>{K("b"), K("c/z")}));
  EXPECT_EQ(all.common_prefixes, (std::vector<std::string>{K("a-"), K("c-")}));
}

TEST_P(StoreConformanceTest, ListStartAfter) {
  std::vector<std::string> keys;
  for (int i = 0; i < 10; ++i) {
    keys.push_back(K("k" + std::to_string(i)));
    PutString(keys.back(), "v");
  }
  ListOptions options;
  options.prefix = K("");
  options.start_after = K("k4");
  EXPECT_EQ(ListAll(options).keys, std::vector<std::string>(keys.begin() + 5, keys.end()));
  options.start_after = K("k4x");  // not a key: still a bound
  EXPECT_EQ(ListAll(options).keys, std::vector<std::string>(keys.begin() + 5, keys.end()));
  options.start_after = K("");
  options.start_after.pop_back();  // before the prefix
  EXPECT_EQ(ListAll(options).keys, keys);
  options.start_after = K("k9");
  EXPECT_TRUE(ListAll(options).keys.empty());
  options.start_after = K("k2");
  options.max_keys = 3;
  Listing paged = ListAll(options);
  EXPECT_EQ(paged.keys, std::vector<std::string>(keys.begin() + 3, keys.end()));
  EXPECT_EQ(paged.pages, 3);
}

TEST_P(StoreConformanceTest, ListIsInByteOrder) {
  // Traps for any order other than the bytes of the key: case, '/' against
  // characters below and above it, escapes a path encoding might add, and
  // multi-byte UTF-8.
  const std::vector<std::string> names = {
      "m b",
      "m!",
      "m%",
      "m%25",
      "m+",
      "m-",
      "m.",
      "m/x",
      "m/%y",
      "m0",
      "mA",
      "m_",
      "m~",
      "n",
      "A",
      "Z",
      "0",
      "m.txt",
      "m\x7F",
      "\xC3\xA9",
      "\xEF\xBC\xA1",
      "\xF0\x9F\x98\x80",
      "m\xC3\xA9",
  };
  std::vector<std::string> keys;
  for (const std::string& name : names) {
    keys.push_back(K(name));
    PutString(keys.back(), name);
  }
  if (FERRY_HAS_CAPABILITY(empty_key_segments)) {
    keys.push_back(K("m//z"));
    PutString(keys.back(), "m//z");
  }
  ListOptions options;
  options.prefix = K("");
  options.max_keys = 1000;
  Listing one_page = ListAll(options);
  EXPECT_EQ(one_page.pages, 1);
  EXPECT_EQ(Sorted(one_page.keys), Sorted(keys)) << "every key is listed";
  FERRY_REQUIRE_CAPABILITY(list_byte_order);
  EXPECT_EQ(one_page.keys, Sorted(keys));
  options.max_keys = 4;
  EXPECT_EQ(ListAll(options).keys, Sorted(keys));
}

TEST_P(StoreConformanceTest, ListReportsSizesAndEtagsOfPutObjects) {
  PutString(K("one"), "1");
  PutString(K("three"), "333");
  ListOptions options;
  options.prefix = K("");
  auto page = store().List(options);
  ASSERT_TRUE(page.ok());
  if (!FERRY_HAS_CAPABILITY(read_after_write)) {
    // Give a store without read-after-write a moment to settle.
    for (int i = 0; i < 50 && page.ok() && page->objects.size() == 2 &&
                    (page->objects[0].size != 1u || page->objects[1].size != 3u);
         ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      page = store().List(options);
    }
    ASSERT_TRUE(page.ok());
  }
  ASSERT_EQ(page->objects.size(), 2u);
  EXPECT_EQ(page->objects[0].key, K("one"));
  EXPECT_EQ(page->objects[0].size, 1u);
  EXPECT_EQ(BodyMd5(page->objects[0]), Md5Hex("1"));
  EXPECT_EQ(page->objects[1].size, 3u);
  EXPECT_EQ(BodyMd5(page->objects[1]), Md5Hex("333"));
}

}  // namespace
}  // namespace ferry::conformance
