// The proxy's big objects: bodies over max_object cached as they stream,
// shared with requests that come meanwhile, and answered a frame at a time.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "base/test_temp_dir.h"
#include "base/units.h"
#include "cache/proxy.h"
#include "cache/proxy_test_util.h"
#include "codec/zstd_codec.h"

namespace ferry::cache {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;


std::string RandomBody(size_t n) {
  std::mt19937_64 rng(7);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

class ProxyBigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OpenStore();
    options_.routing = std::move(ParseRouting("http://origin.test:8000", {})).value();
    options_.admin_allow = std::move(ParseAllowList({"127.0.0.1"})).value();
    options_.max_object = kMiB;
    options_.spool_dir = dir_ / "tmp";
    text_ = Text(5 * kMiB + 12'345);  // six frames, the last partial
    binary_ = RandomBody(3 * kMiB + 10);
    http::Headers cached = {{"Cache-Control", "max-age=60"}, {"ETag", "\"b1\""}};
    upstream_.answers["/huge.html"] = {200, cached, text_};
    upstream_.answers["/huge.html"].headers.emplace_back("Content-Type", "text/html");
    upstream_.answers["/huge.bin"] = {200, cached, binary_};
    upstream_.answers["/huge.bin"].headers.emplace_back("Content-Type", "application/octet-stream");
    upstream_.answers["/private.html"] = {200, {{"Content-Type", "text/html"}, {"Cache-Control", "private"}}, text_};
  }

  void OpenStore() {
    DiskStoreOptions so;
    so.dir = dir_.path();
    so.sync = false;
    so.background_compaction = false;
    store_ = std::move(DiskStore::Open(so)).value();
  }
  Proxy& proxy() {
    if (!proxy_) proxy_ = std::make_unique<Proxy>(options_, store_.get(), &upstream_);
    return *proxy_;
  }
  static std::string Key(const std::string& target) {
    return ParseRouting("http://origin.test:8000", {})->fallback->endpoint.ToString() + target;
  }
  static ProxyRequest Get(const std::string& target, http::Headers headers = {}) {
    return GetRequest(target, std::move(headers));
  }
  static std::string ReadAll(const ProxyResponse& r) {
    EXPECT_NE(r.stream, nullptr);
    if (!r.stream) return std::string(r.body);
    std::string got;
    for (;;) {
      auto piece = r.stream->Read(64 << 10);
      EXPECT_TRUE(piece.ok()) << piece.status().ToString();
      if (!piece.ok() || piece->empty()) return got;
      got += *piece;
    }
  }
  // The fill's disk writer runs on its own: wait for its commit.
  void WaitForBigEntries(uint64_t n) {
    for (int i = 0; i < 500 && store_->stats().big_entries < n; ++i) std::this_thread::sleep_for(10ms);
    ASSERT_EQ(store_->stats().big_entries, n);
  }
  // What a ranged GET answers, and how many bytes were decoded for it.
  std::pair<std::string, uint64_t> Range(const std::string& target, const std::string& range) {
    uint64_t before = proxy().counters().decode_bytes;
    ProxyResponse r = proxy().Handle(Get(target, {{"Range", "bytes=" + range}}));
    EXPECT_EQ(r.status, 206) << range;
    EXPECT_EQ(HeaderValue(r.headers, "X-Cache"), "HIT");
    std::string got = ReadAll(r);
    EXPECT_EQ(r.stream_length, got.size());
    return {got, proxy().counters().decode_bytes - before};
  }

  TestTempDir dir_;
  std::unique_ptr<DiskStore> store_;
  ProxyOptions options_;
  FakeUpstream upstream_;
  std::unique_ptr<Proxy> proxy_;
  std::string text_, binary_;
};

TEST_F(ProxyBigTest, ATextObjectIsCachedAsFramesAndARangeDecodesOnlyItsFrames) {
  ProxyResponse first = proxy().Handle(Get("/huge.html"));
  ASSERT_EQ(first.status, 200);
  EXPECT_EQ(HeaderValue(first.headers, "X-Cache"), "MISS");
  EXPECT_EQ(ReadAll(first), text_);
  WaitForBigEntries(1);
  DiskStoreStats st = store_->stats();
  EXPECT_LT(st.bytes * 10, text_.size());  // compressed
  EXPECT_EQ(st.logical_bytes, text_.size());
  // The fill counts itself just after its commit: the entry may be seen first.
  for (int i = 0; i < 500 && proxy().counters().big_fills < 1; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(proxy().counters().big_fills, 1u);

  // Within one frame (the third), across an edge, the last partial frame.
  auto [inside, d1] = Range("/huge.html", "2500000-2600000");
  EXPECT_EQ(inside, text_.substr(2'500'000, 100'001));
  EXPECT_EQ(d1, kMiB);
  auto [across, d2] = Range("/huge.html", std::to_string(kMiB - 500) + "-" + std::to_string(kMiB + 499));
  EXPECT_EQ(across, text_.substr(kMiB - 500, 1000));
  EXPECT_EQ(d2, 2 * kMiB);
  auto [edge, d3] = Range("/huge.html", std::to_string(2 * kMiB) + "-" + std::to_string(3 * kMiB - 1));
  EXPECT_EQ(edge, text_.substr(2 * kMiB, kMiB));
  EXPECT_EQ(d3, kMiB);
  auto [tail, d4] = Range("/huge.html", "-100");
  EXPECT_EQ(tail, text_.substr(text_.size() - 100));
  EXPECT_EQ(d4, 12'345u);

  // A zstd client gets the stored frames as they are: nothing decoded.
  uint64_t decoded = proxy().counters().decode_bytes;
  ProxyResponse z = proxy().Handle(Get("/huge.html", {{"Accept-Encoding", "zstd"}}));
  EXPECT_EQ(HeaderValue(z.headers, "Content-Encoding"), "zstd");
  auto entry = store_->Get(Key("/huge.html"));
  ASSERT_TRUE(entry.ok() && *entry) << entry.status().ToString() << " entries " << store_->stats().entries;
  uint64_t stored = (*entry)->meta.stored_length;
  EXPECT_EQ(z.stream_length, stored);
  EXPECT_EQ(*codec::ZstdDecompress(ReadAll(z)), text_);
  EXPECT_EQ(proxy().counters().decode_bytes, decoded);
  // An identity client gets it all, decoded frame by frame.
  ProxyResponse whole = proxy().Handle(Get("/huge.html"));
  EXPECT_EQ(HeaderValue(whole.headers, "X-Cache"), "HIT");
  EXPECT_EQ(ReadAll(whole), text_);
  EXPECT_EQ(proxy().counters().decode_bytes, decoded + text_.size());
  ProxyRequest head = Get("/huge.html");
  head.method = "HEAD";
  EXPECT_EQ(proxy().Handle(head).head_length, text_.size());
  EXPECT_EQ(upstream_.calls, 1);

  // After a restart, from disk again.
  proxy_.reset();
  store_.reset();
  OpenStore();
  auto [again, d5] = Range("/huge.html", "5000000-5000009");
  EXPECT_EQ(again, text_.substr(5'000'000, 10));
  EXPECT_EQ(d5, kMiB);
  EXPECT_EQ(upstream_.calls, 1);
}

TEST_F(ProxyBigTest, ABinaryObjectIsStoredAsItCameAndARangeIsARead) {
  EXPECT_EQ(ReadAll(proxy().Handle(Get("/huge.bin"))), binary_);
  WaitForBigEntries(1);
  auto entry = store_->Get(Key("/huge.bin"));
  ASSERT_TRUE(entry.ok() && *entry);
  EXPECT_EQ((*entry)->meta.encoding, StoredEncoding::kIdentity);
  EXPECT_EQ((*entry)->meta.stored_length, binary_.size());
  uint64_t read0 = proxy().counters().big_read_bytes;
  auto [got, decoded] = Range("/huge.bin", "1500000-1600000");
  EXPECT_EQ(got, binary_.substr(1'500'000, 100'001));
  EXPECT_EQ(decoded, 0u);
  EXPECT_EQ(proxy().counters().big_read_bytes - read0, kMiB);  // the one block it lies in, checked
  ProxyResponse z = proxy().Handle(Get("/huge.bin", {{"Accept-Encoding", "zstd"}}));
  EXPECT_EQ(HeaderValue(z.headers, "Content-Encoding"), "");
  EXPECT_EQ(ReadAll(z), binary_);
  EXPECT_EQ(upstream_.calls, 1);
}

TEST_F(ProxyBigTest, RequestsDuringAFillReadTheSameSpool) {
  upstream_.pause_after = 2 * kMiB;  // the body stops midway until released
  ProxyResponse leader = proxy().Handle(Get("/huge.html"));  // back once the body outgrew max_object
  ASSERT_NE(leader.stream, nullptr);
  ProxyResponse follower = proxy().Handle(Get("/huge.html"));
  ASSERT_NE(follower.stream, nullptr);
  EXPECT_EQ(HeaderValue(follower.headers, "X-Cache"), "HIT");
  EXPECT_EQ(proxy().counters().coalesced, 1u);
  std::string a, b;
  std::thread ta([&] { a = ReadAll(leader); });
  std::thread tb([&] { b = ReadAll(follower); });
  std::this_thread::sleep_for(50ms);
  upstream_.Release();
  ta.join();
  tb.join();
  EXPECT_EQ(a, text_);
  EXPECT_EQ(b, text_);
  WaitForBigEntries(1);
  EXPECT_EQ(ReadAll(proxy().Handle(Get("/huge.html"))), text_);
  EXPECT_EQ(upstream_.calls, 1);
}

TEST_F(ProxyBigTest, AClientThatLeavesDoesNotStopTheFill) {
  ProxyResponse r = proxy().Handle(Get("/huge.html"));
  ASSERT_NE(r.stream, nullptr);
  ASSERT_TRUE(r.stream->Read(1000).ok());
  r.stream->Cancel();
  r = {};
  WaitForBigEntries(1);
  EXPECT_EQ(ReadAll(proxy().Handle(Get("/huge.html"))), text_);
  EXPECT_EQ(upstream_.calls, 1);
}

TEST_F(ProxyBigTest, APurgeDuringAFillIsNotUndoneByIt) {
  upstream_.pause_after = 2 * kMiB;
  ProxyResponse r = proxy().Handle(Get("/huge.html"));
  ASSERT_NE(r.stream, nullptr);
  ProxyRequest purge = Get("/huge.html");
  purge.method = "PURGE";
  EXPECT_EQ(proxy().Handle(purge).status, 200);  // nothing on disk yet, but a fill under way
  upstream_.Release();
  EXPECT_EQ(ReadAll(r), text_);  // its client still gets it all
  for (int i = 0; i < 500 && proxy().counters().store_failures == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(proxy().counters().store_failures, 1u);
  EXPECT_EQ(store_->stats().entries, 0u);
  EXPECT_EQ(HeaderValue(proxy().Handle(Get("/huge.html")).headers, "X-Cache"), "MISS");
}

TEST_F(ProxyBigTest, BigObjectsThatMayNotBeStoredAreStreamedAndNotKept) {
  for (int round = 0; round < 2; ++round) {
    ProxyResponse r = proxy().Handle(Get("/private.html", {{"Accept-Encoding", "zstd"}}));
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(r.stream_length, text_.size());
    EXPECT_EQ(HeaderValue(r.headers, "X-Cache"), "MISS");
    EXPECT_EQ(HeaderValue(r.headers, "Content-Encoding"), "");  // passed through as it came
    EXPECT_EQ(ReadAll(r), text_);
  }
  EXPECT_EQ(upstream_.calls, 2);  // not kept: each request goes upstream
  EXPECT_EQ(store_->stats().entries, 0u);
  ProxyRequest head = Get("/private.html");
  head.method = "HEAD";
  ProxyResponse h = proxy().Handle(head);
  EXPECT_EQ(h.stream, nullptr);
  EXPECT_EQ(h.head_length, text_.size());
}

TEST_F(ProxyBigTest, ADamagedFrameEndsTheAnswerAndDropsTheEntry) {
  EXPECT_EQ(ReadAll(proxy().Handle(Get("/huge.html"))), text_);
  WaitForBigEntries(1);
  proxy_.reset();  // nothing in memory
  std::string file;
  for (const auto& e : fs::recursive_directory_iterator(dir_ / "big")) {
    if (e.is_regular_file()) file = e.path();
  }
  ASSERT_FALSE(file.empty());
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(fs::file_size(file) / 2));
    char c = 0;
    f.get(c);
    f.seekp(static_cast<std::streamoff>(fs::file_size(file) / 2));
    f.put(static_cast<char>(c ^ 0x40));
  }
  ProxyResponse r = proxy().Handle(Get("/huge.html"));
  ASSERT_NE(r.stream, nullptr);
  bool failed = false;
  std::string got;
  for (;;) {
    auto piece = r.stream->Read(64 << 10);
    if (!piece.ok()) {
      failed = true;
      break;
    }
    if (piece->empty()) break;
    got += *piece;
  }
  EXPECT_TRUE(failed);  // the connection is cut: never a wrong body
  EXPECT_EQ(got, text_.substr(0, got.size()));
  EXPECT_EQ(store_->stats().entries, 0u);
  EXPECT_EQ(proxy().counters().errors, 1u);
}

}  // namespace
}  // namespace ferry::cache
