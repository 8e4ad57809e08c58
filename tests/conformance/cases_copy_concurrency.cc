// Conformance cases for server-side copy and for concurrent use of a store.

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "conformance/conformance_util.h"
#include "conformance/store_conformance.h"

namespace ferry::conformance {
namespace {

ObjectHeaders SourceHeaders() {
  ObjectHeaders h;
  h.content_type = "image/png";
  h.cache_control = "no-cache";
  h.content_disposition = "inline";
  h.user = {{"camera", "x100"}, {"taken", "2024"}};
  return h;
}

#define FERRY_REQUIRE_SERVER_SIDE_COPY()                                                   \
  do {                                                                                     \
    if (!store().Features().server_side_copy) {                                            \
      auto r = store().Copy(K("src"), K("dst"), std::nullopt);                             \
      ASSERT_FALSE(r.ok());                                                                \
      EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported) << r.status().ToString();      \
      GTEST_SKIP() << GetParam()->Name() << " has no server-side copy (Features says so)"; \
    }                                                                                      \
  } while (0)

TEST_P(StoreConformanceTest, CopyKeepsBytesAndCopiesHeaders) {
  FERRY_REQUIRE_SERVER_SIDE_COPY();
  const std::string data = TestBytes(300'000, 80);
  PutOptions options;
  options.headers = SourceHeaders();
  PutString(K("src"), data, options);
  auto copied = store().Copy(K("src"), K("copies/dst"), std::nullopt);
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  EXPECT_EQ(BodyMd5(*copied), Md5Hex(data));
  auto head = store().Head(K("copies/dst"));
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->size, data.size());
  EXPECT_EQ(BodyMd5(*head), Md5Hex(data));
  EXPECT_EQ(head->headers, SourceHeaders());
  EXPECT_TRUE(GetString(K("copies/dst")) == data);
  EXPECT_TRUE(GetString(K("src")) == data) << "the source is untouched";
}

TEST_P(StoreConformanceTest, CopyReplacesHeaders) {
  FERRY_REQUIRE_SERVER_SIDE_COPY();
  PutOptions options;
  options.headers = SourceHeaders();
  PutString(K("src"), "payload", options);
  ObjectHeaders replacement;
  replacement.content_type = "application/json";
  replacement.content_language = "fr";
  replacement.user = {{"fresh", "yes"}};
  auto copied = store().Copy(K("src"), K("dst"), replacement);
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  auto head = store().Head(K("dst"));
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->headers, replacement) << "REPLACE drops every old header";
  EXPECT_EQ(GetString(K("dst")), "payload");
  auto src = store().Head(K("src"));
  ASSERT_TRUE(src.ok());
  EXPECT_EQ(src->headers, SourceHeaders());
}

TEST_P(StoreConformanceTest, CopyOntoItselfWithNewHeaders) {
  FERRY_REQUIRE_SERVER_SIDE_COPY();
  PutString(K("self"), "same bytes");
  ObjectHeaders replacement;
  replacement.content_type = "text/markdown";
  auto copied = store().Copy(K("self"), K("self"), replacement);
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  auto head = store().Head(K("self"));
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->headers.content_type, "text/markdown");
  EXPECT_EQ(GetString(K("self")), "same bytes");
}

TEST_P(StoreConformanceTest, CopyOverwritesDestination) {
  FERRY_REQUIRE_SERVER_SIDE_COPY();
  PutString(K("src"), "new");
  PutString(K("dst"), "old and longer");
  ASSERT_TRUE(store().Copy(K("src"), K("dst"), std::nullopt).ok());
  EXPECT_EQ(GetString(K("dst")), "new");
}

TEST_P(StoreConformanceTest, CopyMissingSourceIsNotFound) {
  FERRY_REQUIRE_SERVER_SIDE_COPY();
  auto copied = store().Copy(K("absent"), K("dst"), std::nullopt);
  ASSERT_FALSE(copied.ok());
  EXPECT_EQ(copied.status().code(), ErrorCode::kNotFound) << copied.status().ToString();
  EXPECT_FALSE(store().Head(K("dst")).ok());
}

TEST_P(StoreConformanceTest, ConcurrentPutsAndGetsOfDifferentKeys) {
  FERRY_REQUIRE_CAPABILITY(concurrency);
  constexpr int kThreads = 8;
  constexpr int kKeysPerThread = 6;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kKeysPerThread; ++i) {
        // Threads share directories ("t/<i>/") so creation races are exercised.
        std::string key = K("t/" + std::to_string(i) + "/" + std::to_string(t));
        std::string data = TestBytes(10'000 + t * 100 + i, static_cast<uint32_t>(t * 100 + i));
        StringSource body(data);
        auto put = store().Put(key, body, data.size(), {});
        StringSink sink;
        auto got = store().Get(key, {}, sink);
        if (!put.ok() || !got.ok() || sink.data() != data || BodyMd5(*got) != Md5Hex(data)) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  ListOptions list;
  list.prefix = K("t/");
  list.max_keys = 7;
  EXPECT_EQ(ListAll(list).keys.size(), static_cast<size_t>(kThreads * kKeysPerThread));
}

TEST_P(StoreConformanceTest, ConcurrentOverwritesOfOneKeyNeverTear) {
  FERRY_REQUIRE_CAPABILITY(concurrency);
  constexpr int kWriters = 3;
  constexpr int kRounds = 8;
  std::vector<std::string> versions;
  std::vector<std::string> etags;
  for (int w = 0; w < kWriters; ++w) {
    versions.push_back(TestBytes(200'000, static_cast<uint32_t>(900 + w)));
    etags.push_back(Md5Hex(versions.back()));
  }
  const std::string key = K("contended");
  PutString(key, versions[0]);
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0};
  std::atomic<int> reads{0};
  std::thread reader([&] {
    while (!stop.load()) {
      StringSink sink;
      auto got = store().Get(key, {}, sink);
      if (!got.ok()) {
        ++torn;
        continue;
      }
      ++reads;
      bool whole = false;
      for (int w = 0; w < kWriters; ++w) {
        whole = whole || (sink.data() == versions[w] && BodyMd5(*got) == etags[w]);
      }
      if (!whole) ++torn;
    }
  });
  std::vector<std::thread> writers;
  std::atomic<int> write_failures{0};
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int r = 0; r < kRounds; ++r) {
        StringSource body(versions[w]);
        if (!store().Put(key, body, versions[w].size(), {}).ok()) ++write_failures;
      }
    });
  }
  for (std::thread& t : writers) t.join();
  stop = true;
  reader.join();
  EXPECT_EQ(write_failures.load(), 0);
  if (FERRY_HAS_CAPABILITY(atomic_overwrite)) {
    EXPECT_EQ(torn.load(), 0) << "a reader saw a mixed or failed object in " << reads.load()
                              << " reads";
  }
  auto head = store().Head(key);
  ASSERT_TRUE(head.ok());
  EXPECT_NE(std::find(etags.begin(), etags.end(), BodyMd5(*head)), etags.end());
}

}  // namespace
}  // namespace ferry::conformance
