// Conformance cases for AsyncObjectIo, the callback form of Get and Put that
// stores with an event loop offer (ObjectStore::Async()): many calls in
// flight from one thread, every callback exactly once, and the same answers
// and errors as the blocking calls.

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "conformance/conformance_util.h"
#include "conformance/store_conformance.h"

namespace ferry::conformance {
namespace {

#define FERRY_REQUIRE_ASYNC()                                                    \
  do {                                                                           \
    if (store().Async() == nullptr) {                                            \
      GTEST_SKIP() << GetParam()->Name() << " has no asynchronous Get and Put"; \
    }                                                                            \
  } while (0)

// Collects the results of calls in flight, keyed by the caller's index.
class Results {
 public:
  AsyncObjectIo::Done For(int i) {
    return [this, i](Result<ObjectInfo> r) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!got_.emplace(i, std::move(r)).second) ++duplicates_;
      cv_.notify_all();
    };
  }
  // Waits for `n` results (at most a minute); false on timeout.
  bool WaitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::minutes(1), [&] { return got_.size() >= n; });
  }
  const Result<ObjectInfo>& at(int i) { return got_.at(i); }
  int duplicates() const { return duplicates_; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int, Result<ObjectInfo>> got_;
  int duplicates_ = 0;
};

TEST_P(StoreConformanceTest, AsyncPutsAndGetsManyInFlightFromOneThread) {
  FERRY_REQUIRE_ASYNC();
  constexpr int kN = 64;
  std::vector<std::string> data;
  std::vector<std::unique_ptr<ViewSource>> bodies;
  for (int i = 0; i < kN; ++i) data.push_back(TestBytes(1000 + 977 * i, 700 + i));
  Results puts;
  for (int i = 0; i < kN; ++i) {
    bodies.push_back(std::make_unique<ViewSource>(data[i]));
    PutOptions o;
    o.headers.content_type = "text/plain";
    o.headers.user["n"] = std::to_string(i);
    if (i % 2 == 0) o.content_md5 = Md5Base64(data[i]);  // both ways of checking the upload
    store().Async()->PutAsync(K("async/" + std::to_string(i)), *bodies[i], data[i].size(), o,
                              puts.For(i));
  }
  ASSERT_TRUE(puts.WaitFor(kN));
  for (int i = 0; i < kN; ++i) {
    ASSERT_TRUE(puts.at(i).ok()) << i << ": " << puts.at(i).status().ToString();
    EXPECT_EQ(BodyMd5(*puts.at(i)), Md5Hex(data[i]));
  }

  Results gets;
  std::vector<std::unique_ptr<StringSink>> sinks;
  for (int i = 0; i < kN; ++i) {
    sinks.push_back(std::make_unique<StringSink>());
    store().Async()->GetAsync(K("async/" + std::to_string(i)), GetOptions{}, *sinks[i],
                              gets.For(i));
  }
  ASSERT_TRUE(gets.WaitFor(kN));
  for (int i = 0; i < kN; ++i) {
    ASSERT_TRUE(gets.at(i).ok()) << i << ": " << gets.at(i).status().ToString();
    EXPECT_TRUE(sinks[i]->data() == data[i]) << i;
    EXPECT_EQ(gets.at(i)->size, data[i].size());
    EXPECT_EQ(gets.at(i)->headers.content_type, "text/plain");
    EXPECT_EQ(gets.at(i)->headers.user.at("n"), std::to_string(i));
  }
  EXPECT_EQ(puts.duplicates() + gets.duplicates(), 0) << "a callback ran twice";
}

TEST_P(StoreConformanceTest, AsyncRangedGetAndErrorsMatchTheBlockingCalls) {
  FERRY_REQUIRE_ASYNC();
  const std::string data = TestBytes(50'000, 9);
  PutString(K("ranged"), data);
  Results r;
  StringSink range, missing, bad_md5_sink;
  GetOptions o;
  o.range = ByteRange{1000, 2345};
  store().Async()->GetAsync(K("ranged"), o, range, r.For(0));
  store().Async()->GetAsync(K("no-such-key"), GetOptions{}, missing, r.For(1));
  // A body that does not match its Content-MD5: refused, nothing kept.
  ViewSource body(data);
  PutOptions put;
  put.content_md5 = Md5Base64("something else");
  store().Async()->PutAsync(K("bad-md5"), body, data.size(), put, r.For(2));
  ASSERT_TRUE(r.WaitFor(3));
  ASSERT_TRUE(r.at(0).ok()) << r.at(0).status().ToString();
  EXPECT_EQ(range.data(), data.substr(1000, 2345));
  EXPECT_EQ(r.at(0)->size, data.size()) << "the whole object's size";
  ASSERT_FALSE(r.at(1).ok());
  EXPECT_EQ(r.at(1).status().code(), ErrorCode::kNotFound) << r.at(1).status().ToString();
  EXPECT_EQ(r.at(1).status().code(), store().Get(K("no-such-key"), {}, missing).status().code());
  if (FERRY_HAS_CAPABILITY(content_md5)) {
    ASSERT_FALSE(r.at(2).ok());
    EXPECT_EQ(r.at(2).status().code(), ErrorCode::kCorruption) << r.at(2).status().ToString();
    EXPECT_EQ(store().Head(K("bad-md5")).status().code(), ErrorCode::kNotFound);
  }
}

}  // namespace
}  // namespace ferry::conformance
