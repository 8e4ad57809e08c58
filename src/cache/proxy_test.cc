#include "cache/proxy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "codec/text_codings.h"
#include "codec/zstd_codec.h"
#include "cache/proxy_test_util.h"
#include "http/date.h"

namespace ferry::cache {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class ProxyTest : public ProxyFixture {
 protected:
  void SetUp() override {
    ProxyFixture::SetUp();
    options_.admin_allow = std::move(ParseAllowList({"127.0.0.1"})).value();
    body_ = Text(100'000);
    upstream_.answers["/page"] = {200,
                                  {{"Content-Type", "text/html"},
                                   {"ETag", "\"v1\""},
                                   {"Cache-Control", "max-age=60"}},
                                  body_};
    upstream_.answers["/private"] = {200, {{"Content-Type", "text/html"}, {"Cache-Control", "private"}}, body_};
  }
  static ProxyRequest Get(const std::string& target, http::Headers headers = {}) {
    return GetRequest(target, std::move(headers));
  }

  std::string body_;
};

TEST_F(ProxyTest, ConcurrentMissesForOneKeyAreOneUpstreamFetch) {
  upstream_.hold = true;
  proxy();  // made before the threads share it
  constexpr int kClients = 8;
  std::vector<ProxyResponse> got(kClients);
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      got[i] = proxy().Handle(Get("/page", i % 2 ? http::Headers{{"Accept-Encoding", "zstd"}} : http::Headers{}));
    });
  }
  // One request is at the upstream; give the rest time to arrive (without
  // coalescing they would reach the upstream too).
  while (upstream_.calls < 1) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(200ms);
  upstream_.Release();
  for (auto& t : threads) t.join();
  EXPECT_EQ(upstream_.calls, 1);
  EXPECT_EQ(proxy().counters().misses, 1u);
  EXPECT_EQ(proxy().counters().coalesced + proxy().counters().hits, kClients - 1u);
  EXPECT_GE(proxy().counters().coalesced, 1u);
  for (int i = 0; i < kClients; ++i) {
    ASSERT_EQ(got[i].status, 200) << i;
    std::string b(got[i].body);
    if (i % 2) b = *codec::ZstdDecompress(b);
    EXPECT_EQ(b, body_) << i;
  }
}

TEST_F(ProxyTest, AnswersThatAreNotKeptAreNotShared) {
  upstream_.hold = true;
  proxy();
  std::thread a([&] { EXPECT_EQ(proxy().Handle(Get("/private")).status, 200); });
  while (upstream_.calls < 1) std::this_thread::sleep_for(1ms);
  std::thread b([&] { EXPECT_EQ(proxy().Handle(Get("/private")).status, 200); });
  std::this_thread::sleep_for(50ms);
  upstream_.Release();
  a.join();
  b.join();
  EXPECT_EQ(upstream_.calls, 2);  // the second asked on its own
  EXPECT_EQ(store_->stats().entries, 0u);
}

TEST_F(ProxyTest, AStaticOriginsLastModifiedMakesItFreshByHeuristic) {
  // What `python3 -m http.server` sends: Last-Modified and Date, no lifetime.
  auto now = std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now());
  upstream_.answers["/static.css"] = {200,
                                      {{"Content-Type", "text/css"},
                                       {"Date", http::FormatHttpDate(now)},
                                       {"Last-Modified", http::FormatHttpDate(now - std::chrono::hours(10))}},
                                      Text(20'000)};
  upstream_.answers["/nodate.css"] = {200, {{"Content-Type", "text/css"}}, Text(20'000)};
  ASSERT_EQ(proxy().Handle(Get("/static.css")).status, 200);
  auto hit = proxy().Handle(Get("/static.css"));
  EXPECT_EQ(HeaderValue(hit.headers, "X-Cache"), "HIT");
  EXPECT_FALSE(HeaderValue(hit.headers, "Age").empty());
  EXPECT_EQ(hit.body, Text(20'000));
  EXPECT_EQ(upstream_.calls, 1);
  // Neither a lifetime nor Last-Modified, and --default-ttl 0: not kept.
  ASSERT_EQ(proxy().Handle(Get("/nodate.css")).status, 200);
  ASSERT_EQ(proxy().Handle(Get("/nodate.css")).status, 200);
  EXPECT_EQ(upstream_.calls, 3);
  proxy().WaitForEncodes();  // counted once stored, compressed behind the fill
  MetricsSnapshot m = proxy().Metrics();
  EXPECT_EQ(m.heuristic_entries, 1u);
  EXPECT_EQ(m.heuristic_hits, 1u);
  EXPECT_NE(RenderMetrics(m).find("ferry_cache_heuristic_hits_total 1\n"), std::string::npos);
}

TEST_F(ProxyTest, FreshHitsComeFromMemoryWithoutBlocking) {
  EXPECT_FALSE(proxy().HandleFromMemory(Get("/page")).has_value());  // a miss needs a worker
  ASSERT_EQ(proxy().Handle(Get("/page")).status, 200);
  auto hit = proxy().HandleFromMemory(Get("/page"));
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(HeaderValue(hit->headers, "X-Cache"), "HIT");
  EXPECT_EQ(hit->body, body_);
  EXPECT_EQ(upstream_.calls, 1);
  // PURGE and other methods always go to a worker.
  ProxyRequest purge = Get("/page");
  purge.method = "PURGE";
  EXPECT_FALSE(proxy().HandleFromMemory(purge).has_value());
}

TEST_F(ProxyTest, IdentityClientsShareOneDecodeOfAVersion) {
  ASSERT_EQ(proxy().Handle(Get("/page", {{"Accept-Encoding", "zstd"}})).status, 200);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(proxy().Handle(Get("/page")).body, body_);
  // The fill kept the original it compressed: nothing was decoded.
  EXPECT_EQ(proxy().counters().decode_bytes, 0u);
  // Restarted, the memory tier is empty: one decode, then from memory.
  proxy_.reset();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(proxy().Handle(Get("/page")).body, body_);
  EXPECT_EQ(proxy().counters().decode_bytes, body_.size());
  // A new version: its decoded copy is made again, never the old one served.
  std::string v2 = Text(90'000) + "version 2";
  upstream_.answers["/page"].body = v2;
  ProxyRequest purge = Get("/page");
  purge.method = "PURGE";
  ASSERT_EQ(proxy().Handle(purge).status, 200);
  ASSERT_EQ(proxy().Handle(Get("/page", {{"Accept-Encoding", "zstd"}})).status, 200);
  EXPECT_EQ(proxy().Handle(Get("/page")).body, v2);
  EXPECT_EQ(proxy().counters().decode_bytes, body_.size());
}

TEST_F(ProxyTest, GzipAndBrClientsGetAVariantMadeOnceWithItsOwnEtag) {
  ASSERT_EQ(proxy().Handle(Get("/page")).status, 200);  // filled, stored as zstd
  struct Case {
    const char* accept;
    const char* coding;
    Result<std::string> (*decode)(std::string_view);
  };
  const Case cases[] = {{"gzip, deflate", "gzip", codec::GzipDecompress},
                        {"gzip, deflate, br", "br", codec::BrotliDecompress}};
  for (const Case& c : cases) {
    uint64_t encoded_before = proxy().Metrics().coding_encode_bytes[c.coding == std::string("br") ? 2 : 3];
    for (int i = 0; i < 3; ++i) {
      auto r = proxy().Handle(Get("/page", {{"Accept-Encoding", c.accept}}));
      ASSERT_EQ(r.status, 200) << c.coding;
      EXPECT_EQ(HeaderValue(r.headers, "Content-Encoding"), c.coding);
      EXPECT_EQ(HeaderValue(r.headers, "ETag"), std::string("\"v1-") + c.coding + "\"");
      EXPECT_EQ(HeaderValue(r.headers, "Vary"), "Accept-Encoding");
      EXPECT_TRUE(HeaderValue(r.headers, "Accept-Ranges").empty());
      EXPECT_LT(r.body.size(), body_.size() / 3);
      auto plain = c.decode(r.body);
      ASSERT_TRUE(plain.ok()) << plain.status().ToString();
      EXPECT_EQ(*plain, body_) << c.coding;
    }
    // Encoded once for the three, then answered from memory on the loop.
    MetricsSnapshot m = proxy().Metrics();
    size_t i = c.coding == std::string("br") ? 2 : 3;
    EXPECT_EQ(m.coding_encode_bytes[i] - encoded_before, body_.size()) << c.coding;
    EXPECT_EQ(m.coding_responses[i], 3u) << c.coding;
    auto inline_hit = proxy().HandleFromMemory(Get("/page", {{"Accept-Encoding", c.accept}}));
    ASSERT_TRUE(inline_hit.has_value()) << c.coding;
    EXPECT_EQ(HeaderValue(inline_hit->headers, "Content-Encoding"), c.coding);
    // Its own validator: 304 for it, a full answer for another coding's.
    auto not_modified = proxy().Handle(
        Get("/page", {{"Accept-Encoding", c.accept}, {"If-None-Match", std::string("\"v1-") + c.coding + "\""}}));
    EXPECT_EQ(not_modified.status, 304) << c.coding;
    EXPECT_TRUE(not_modified.body.empty());
    EXPECT_EQ(proxy().Handle(Get("/page", {{"Accept-Encoding", c.accept}, {"If-None-Match", "\"v1-zstd\""}})).status,
              200);
    // A HEAD says what a GET would send.
    ProxyRequest head = Get("/page", {{"Accept-Encoding", c.accept}});
    head.method = "HEAD";
    auto h = proxy().Handle(head);
    EXPECT_EQ(HeaderValue(h.headers, "Content-Encoding"), c.coding);
    ASSERT_TRUE(h.head_length.has_value());
    EXPECT_EQ(*h.head_length, proxy().Handle(Get("/page", {{"Accept-Encoding", c.accept}})).body.size());
    // A range is cut from the identity representation, whatever is accepted.
    auto ranged = proxy().Handle(Get("/page", {{"Accept-Encoding", c.accept}, {"Range", "bytes=100-199"}}));
    EXPECT_EQ(ranged.status, 206);
    EXPECT_TRUE(HeaderValue(ranged.headers, "Content-Encoding").empty());
    EXPECT_EQ(ranged.body, body_.substr(100, 100));
  }
  // q=0 is honoured; identity for a client that takes nothing we have.
  auto r = proxy().Handle(Get("/page", {{"Accept-Encoding", "zstd;q=0, br;q=0, gzip"}}));
  EXPECT_EQ(HeaderValue(r.headers, "Content-Encoding"), "gzip");
  r = proxy().Handle(Get("/page", {{"Accept-Encoding", "deflate"}}));
  EXPECT_TRUE(HeaderValue(r.headers, "Content-Encoding").empty());
  EXPECT_EQ(r.body, body_);
  EXPECT_EQ(upstream_.calls, 1);
  EXPECT_NE(RenderMetrics(proxy().Metrics()).find("ferry_cache_responses_total{encoding=\"br\"} "), std::string::npos);
}

TEST_F(ProxyTest, ANewVersionGetsNewVariantsAndTurnedOffCodingsAreNotSent) {
  ASSERT_EQ(proxy().Handle(Get("/page", {{"Accept-Encoding", "gzip"}})).status, 200);
  std::string v2 = Text(80'000) + "version 2";
  upstream_.answers["/page"].body = v2;
  ProxyRequest purge = Get("/page");
  purge.method = "PURGE";
  ASSERT_EQ(proxy().Handle(purge).status, 200);
  auto r = proxy().Handle(Get("/page", {{"Accept-Encoding", "gzip"}}));
  EXPECT_EQ(*codec::GzipDecompress(r.body), v2);  // never the old version's variant
  r = proxy().Handle(Get("/page", {{"Accept-Encoding", "gzip"}}));
  EXPECT_EQ(*codec::GzipDecompress(r.body), v2);
  proxy_.reset();
  options_.br_level = 0;
  options_.gzip_level = 0;
  r = proxy().Handle(Get("/page", {{"Accept-Encoding", "gzip, br"}}));
  EXPECT_TRUE(HeaderValue(r.headers, "Content-Encoding").empty());
  EXPECT_EQ(r.body, v2);
}

TEST_F(ProxyTest, RangesAreServedFromTheIdentityRepresentation) {
  ASSERT_EQ(proxy().Handle(Get("/page")).status, 200);
  auto r = proxy().Handle(Get("/page", {{"Range", "bytes=1000-1999"}, {"Accept-Encoding", "zstd"}}));
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.body, body_.substr(1000, 1000));
  EXPECT_EQ(HeaderValue(r.headers, "Content-Range"), "bytes 1000-1999/100000");
  EXPECT_EQ(HeaderValue(r.headers, "Content-Encoding"), "");
  EXPECT_EQ(HeaderValue(r.headers, "ETag"), "\"v1\"");
  auto tail = proxy().Handle(Get("/page", {{"Range", "bytes=-10"}}));
  EXPECT_EQ(tail.status, 206);
  EXPECT_EQ(tail.body, body_.substr(body_.size() - 10));
  auto bad = proxy().Handle(Get("/page", {{"Range", "bytes=100000-"}}));
  EXPECT_EQ(bad.status, 416);
  EXPECT_EQ(HeaderValue(bad.headers, "Content-Range"), "bytes */100000");
  auto stale_if_range = proxy().Handle(Get("/page", {{"Range", "bytes=0-9"}, {"If-Range", "\"v0\""}}));
  EXPECT_EQ(stale_if_range.status, 200);
  EXPECT_EQ(stale_if_range.body.size(), body_.size());
  auto head = proxy().Handle([&] {
    ProxyRequest h = Get("/page", {{"Range", "bytes=0-99"}});
    h.method = "HEAD";
    return h;
  }());
  EXPECT_EQ(head.status, 206);
  EXPECT_EQ(head.head_length, 100u);
  EXPECT_EQ(upstream_.calls, 1);
}

TEST_F(ProxyTest, ALowerTierStoresTheUpperTiersBytesWithoutCompressingAgain) {
  Proxy& upper = proxy();
  // The lower tier's upstream is the upper tier itself.
  class TierLink : public Upstream {
   public:
    explicit TierLink(Proxy* p) : p_(p) {}
    Status Send(const http::Endpoint&, const http::Request& req, ByteSink* sink, http::Response* out) override {
      ProxyRequest pr;
      pr.method = req.method;
      pr.target = req.target;
      pr.headers = req.headers;
      pr.peer = "127.0.0.1";
      ProxyResponse r = p_->Handle(pr);
      out->status = r.status;
      out->headers = r.headers;
      bytes += r.body.size();
      if (r.status >= 200 && r.status < 300) return sink->Write(r.body);
      return Status::Ok();
    }
    uint64_t bytes = 0;

   private:
    Proxy* p_;
  } link(&upper);
  char tmpl[] = "/tmp/ferry-proxy-lower.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  auto lower_store = OpenTestStore(tmpl);
  ProxyOptions lo = options_;
  lo.parents = {*http::ParseEndpoint("http://upper.test:9000")};
  Proxy lower(lo, lower_store.get(), &link);

  auto r = lower.Handle(Get("/page"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, body_);  // decoded for this identity client
  EXPECT_EQ(HeaderValue(r.headers, std::string(kStoredHeader)), "");
  EXPECT_EQ(HeaderValue(r.headers, "Content-Encoding"), "");
  EXPECT_EQ(HeaderValue(r.headers, "ETag"), "\"v1\"");
  EXPECT_LT(link.bytes, body_.size() / 3);  // zstd between the tiers
  EXPECT_EQ(lower.counters().encode_bytes, 0u);  // the lower tier compressed nothing
  EXPECT_EQ(upper.counters().encode_bytes, body_.size());
  auto z = lower.Handle(Get("/page", {{"Accept-Encoding", "zstd"}}));
  EXPECT_EQ(HeaderValue(z.headers, "X-Cache"), "HIT");
  EXPECT_EQ(*codec::ZstdDecompress(z.body), body_);
  EXPECT_EQ(upstream_.calls, 1);  // the origin was asked once, by the upper tier
  fs::remove_all(tmpl);
}

TEST_F(ProxyTest, AStoredMarkerFromAnOriginIsNotTrusted) {
  std::string z = *codec::ZstdCompress(body_);
  upstream_.answers["/liar"] = {200,
                                {{"Content-Type", "text/html"},
                                 {"Cache-Control", "max-age=60"},
                                 {std::string(kStoredHeader), "zstd; length=100000"}},
                                z};
  auto r = proxy().Handle(Get("/liar"));
  EXPECT_EQ(r.body, z);  // served as the origin sent it, not decoded
  EXPECT_EQ(HeaderValue(r.headers, std::string(kStoredHeader)), "");
}

TEST_F(ProxyTest, PurgeAndMetricsAreForAllowedAddressesOnly) {
  ASSERT_EQ(proxy().Handle(Get("/page")).status, 200);
  ProxyRequest purge = Get("/page");
  purge.method = "PURGE";
  purge.peer = "10.0.0.1";
  EXPECT_EQ(proxy().Handle(purge).status, 403);
  ProxyRequest metrics = Get(std::string(kMetricsPath));
  metrics.peer = "10.0.0.1";
  EXPECT_EQ(proxy().Handle(metrics).status, 403);
  purge.peer = "127.0.0.1";
  EXPECT_EQ(proxy().Handle(purge).status, 200);
  EXPECT_EQ(proxy().Handle(purge).status, 404);
  EXPECT_EQ(HeaderValue(proxy().Handle(Get("/page")).headers, "X-Cache"), "MISS");
  metrics.peer = "127.0.0.1";
  auto m = proxy().Handle(metrics);
  EXPECT_EQ(m.status, 200);
  std::string text(m.body);
  EXPECT_NE(text.find("ferry_cache_purges_total 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ferry_cache_requests_total{result=\"miss\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("ferry_cache_disk_entries 1\n"), std::string::npos);
}

TEST_F(ProxyTest, ARevalidationWritesTheNewHeadersNotTheBody) {
  ASSERT_EQ(proxy().Handle(Get("/page")).status, 200);
  proxy().WaitForEncodes();
  const uint64_t before = store_->stats().segment_bytes;
  upstream_.answers["/page"] = {304, {{"ETag", "\"v1\""}, {"Cache-Control", "max-age=60"}}, ""};
  for (int i = 0; i < 1000; ++i) {
    auto r = proxy().Handle(Get("/page", {{"Cache-Control", "no-cache"}}));  // revalidates
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(r.body, body_) << i;
  }
  EXPECT_EQ(upstream_.calls, 1001);
  DiskStoreStats st = store_->stats();
  EXPECT_EQ(st.refreshes, 1000u);
  EXPECT_LT(st.segment_bytes - before, 1u << 20) << "100 KB bodies written again";
  EXPECT_EQ(proxy().Metrics().refresh_bytes, st.segment_bytes - before);
  proxy_.reset();  // from disk: the refreshed entry answers
  auto hit = proxy().Handle(Get("/page"));
  EXPECT_EQ(HeaderValue(hit.headers, "X-Cache"), "HIT");
  EXPECT_EQ(hit.body, body_);
}

TEST_F(ProxyTest, AnUpstreamFailureIsAnErrorAndNothingIsCached) {
  class Failing : public Upstream {
   public:
    Status Send(const http::Endpoint&, const http::Request&, ByteSink* sink, http::Response* out) override {
      out->status = 200;
      out->headers = {{"Content-Type", "text/html"}, {"Cache-Control", "max-age=60"}};
      (void)sink->Write("partial body");
      return Status(ErrorCode::kCorruption, "body cut short");
    }
  } failing;
  Proxy p(options_, store_.get(), &failing);
  auto r = p.Handle(Get("/page"));
  EXPECT_EQ(r.status, 502);
  EXPECT_EQ(store_->stats().entries, 0u);
  EXPECT_EQ(p.counters().errors, 1u);
}

// Small bodies are compressed behind their fills (fill_encoder.h).
class EncodeBehindTest : public ProxyTest {
 protected:
  void SetUp() override {
    ProxyTest::SetUp();
    small_ = Text(20'000);
    for (const char* path : {"/a.css", "/b.css"}) {
      upstream_.answers[path] = {200, {{"Content-Type", "text/css"}, {"Cache-Control", "max-age=60"}}, small_};
    }
    options_.encode_behind.gather = std::chrono::hours(1);  // held until WaitForEncodes
    options_.encode_behind.max_batch = 100;
  }
  ProxyResponse Zstd(const std::string& path) { return proxy().Handle(Get(path, {{"Accept-Encoding", "zstd"}})); }
  std::string small_;
};

TEST_F(EncodeBehindTest, AMissIsAnsweredAsItCameAndStoredCompressedOnceEncoded) {
  auto miss = Zstd("/a.css");
  EXPECT_EQ(HeaderValue(miss.headers, "X-Cache"), "MISS");
  EXPECT_EQ(HeaderValue(miss.headers, "Content-Encoding"), "");
  EXPECT_EQ(miss.body, small_);
  auto early = Zstd("/a.css");  // from memory, before the encoder's turn
  EXPECT_EQ(HeaderValue(early.headers, "X-Cache"), "HIT");
  EXPECT_EQ(early.body, small_);
  EXPECT_EQ(store_->stats().entries, 0u);
  proxy().WaitForEncodes();
  EXPECT_EQ(store_->stats().entries, 1u);
  auto hit = Zstd("/a.css");
  EXPECT_EQ(HeaderValue(hit.headers, "X-Cache"), "HIT");
  EXPECT_EQ(HeaderValue(hit.headers, "Content-Encoding"), "zstd");
  EXPECT_EQ(codec::ZstdDecompress(hit.body).value(), small_);
  EXPECT_EQ(proxy().Handle(Get("/a.css")).body, small_);  // identity: the fill's bytes, no decode
  EXPECT_EQ(proxy().counters().decode_bytes, 0u);
  MetricsSnapshot m = proxy().Metrics();
  EXPECT_EQ(m.encode_behind, 1u);
  EXPECT_EQ(m.encode_bytes, small_.size());
  EXPECT_GT(m.encode_ns, 0u);
  EXPECT_EQ(m.encode_batches, 1u);
  EXPECT_EQ(m.stored_bytes, hit.body.size());
  EXPECT_EQ(upstream_.calls, 1);
  // From disk alone (a restart), the entry is the compressed one.
  proxy_.reset();
  EXPECT_EQ(codec::ZstdDecompress(Zstd("/a.css").body).value(), small_);
  EXPECT_EQ(upstream_.calls, 1);
}

TEST_F(EncodeBehindTest, APurgeBeforeTheEncodersTurnStoresNothing) {
  ASSERT_EQ(Zstd("/a.css").status, 200);
  ProxyRequest purge = Get("/a.css");
  purge.method = "PURGE";
  ASSERT_EQ(proxy().Handle(purge).status, 200);
  proxy().WaitForEncodes();
  EXPECT_EQ(store_->stats().entries, 0u);
  MetricsSnapshot m = proxy().Metrics();
  EXPECT_EQ(m.encode_behind, 1u);  // the work was done, and thrown away
  EXPECT_EQ(m.stored_bytes, 0u);
  EXPECT_EQ(HeaderValue(Zstd("/a.css").headers, "X-Cache"), "MISS");
  EXPECT_EQ(upstream_.calls, 2);
}

TEST_F(EncodeBehindTest, ANewerVersionFilledMeanwhileIsTheOneStored) {
  ASSERT_EQ(Zstd("/a.css").status, 200);
  // Version 2, too large to wait for the encoder: stored inline at once.
  const std::string v2 = Text(90'000) + "version 2";
  upstream_.answers["/a.css"].body = v2;
  ASSERT_EQ(proxy().Handle(Get("/a.css", {{"Cache-Control", "no-cache"}})).body, v2);
  proxy().WaitForEncodes();  // version 1's frame arrives last and is dropped
  EXPECT_EQ(store_->stats().entries, 1u);
  proxy_.reset();
  EXPECT_EQ(proxy().Handle(Get("/a.css")).body, v2);
  // Version 3, small: behind, replacing version 2 once encoded.
  const std::string v3 = Text(10'000) + "version 3";
  upstream_.answers["/a.css"].body = v3;
  ASSERT_EQ(proxy().Handle(Get("/a.css", {{"Cache-Control", "no-cache"}})).body, v3);
  EXPECT_EQ(proxy().Handle(Get("/a.css")).body, v3);
  proxy().WaitForEncodes();
  proxy_.reset();
  EXPECT_EQ(codec::ZstdDecompress(Zstd("/a.css").body).value(), v3);
}

TEST_F(EncodeBehindTest, AFullQueueCompressesInlineAndNothingIsLostAtTheEnd) {
  options_.encode_behind.max_jobs = 1;
  ASSERT_EQ(Zstd("/a.css").status, 200);  // behind
  auto inline_fill = Zstd("/b.css");      // the queue is full: compressed before the answer
  EXPECT_EQ(HeaderValue(inline_fill.headers, "Content-Encoding"), "zstd");
  EXPECT_EQ(store_->stats().entries, 1u);
  proxy_.reset();  // the end: /a.css is encoded and stored
  EXPECT_EQ(store_->stats().entries, 2u);
  EXPECT_EQ(codec::ZstdDecompress(Zstd("/a.css").body).value(), small_);
  EXPECT_EQ(upstream_.calls, 2);
}

TEST_F(EncodeBehindTest, A304ForAnEntryStillWaitingKeepsItCompressedWhenStored) {
  upstream_.answers["/a.css"].headers.emplace_back("ETag", "\"a1\"");
  ASSERT_EQ(Zstd("/a.css").status, 200);  // waiting for the encoder
  upstream_.answers["/a.css"].status = 304;
  auto refreshed = proxy().Handle(Get("/a.css", {{"Cache-Control", "no-cache"}}));
  EXPECT_EQ(refreshed.status, 200);
  EXPECT_EQ(refreshed.body, small_);
  EXPECT_EQ(upstream_.last_headers.size() > 0 && !HeaderValue(upstream_.last_headers, "If-None-Match").empty(), true);
  proxy().WaitForEncodes();
  EXPECT_EQ(store_->stats().entries, 1u);
  proxy_.reset();
  auto hit = Zstd("/a.css");
  EXPECT_EQ(HeaderValue(hit.headers, "Content-Encoding"), "zstd");
  EXPECT_EQ(codec::ZstdDecompress(hit.body).value(), small_);
  EXPECT_EQ(upstream_.calls, 2);
}

TEST_F(EncodeBehindTest, WithNoMemoryTierAWaitingEntryStillAnswersHits) {
  options_.memory_bytes = 0;
  ASSERT_EQ(Zstd("/a.css").status, 200);
  for (int i = 0; i < 3; ++i) {
    auto hit = Zstd("/a.css");
    EXPECT_EQ(HeaderValue(hit.headers, "X-Cache"), "HIT");
    EXPECT_EQ(hit.body, small_);
  }
  EXPECT_EQ(upstream_.calls, 1);
  proxy().WaitForEncodes();
  auto hit = Zstd("/a.css");  // from disk now
  EXPECT_EQ(codec::ZstdDecompress(hit.body).value(), small_);
  EXPECT_EQ(upstream_.calls, 1);
}

TEST_F(EncodeBehindTest, ALowerTiersFillIsCompressedBeforeItsAnswer) {
  auto tier = proxy().Handle(Get("/a.css", {{"X-Ferry-Tier", "stored"}, {"Accept-Encoding", "zstd"}}));
  EXPECT_EQ(HeaderValue(tier.headers, "Content-Encoding"), "zstd");
  EXPECT_EQ(HeaderValue(tier.headers, "X-Ferry-Stored"), "zstd; length=" + std::to_string(small_.size()));
  EXPECT_EQ(codec::ZstdDecompress(tier.body).value(), small_);
  EXPECT_EQ(store_->stats().entries, 1u);
  EXPECT_EQ(proxy().Metrics().encode_behind, 0u);
}

std::string Decoded(const std::string& frame) {
  auto d = codec::ZstdDecompress(frame);
  return d.ok() ? *d : "(not a zstd frame)";
}

TEST_F(EncodeBehindTest, FillsHitsAndPurgesAtOnceAlwaysAnswerTheBytes) {
  // A queue of 2 (so fills also take the inline path while others read
  // what they fill) and turns every millisecond; run under TSan by CI.
  options_.encode_behind.max_jobs = 2;
  options_.encode_behind.gather = 1ms;
  std::atomic<int> wrong{0};
  auto client = [&](int seed) {
    for (int i = 0; i < 150; ++i) {
      const std::string path = (i + seed) % 2 ? "/a.css" : "/b.css";
      ProxyRequest req = Get(path, {{"Accept-Encoding", "zstd"}});
      if ((i * 7 + seed) % 5 == 0) req.headers.emplace_back("Cache-Control", "no-cache");
      if ((i * 3 + seed) % 11 == 0) {
        req.method = "PURGE";
        proxy().Handle(req);
        continue;
      }
      auto r = proxy().Handle(req);
      std::string body(r.body);
      if (HeaderValue(r.headers, "Content-Encoding") == "zstd") body = Decoded(body);
      if (r.status != 200 || body != small_) wrong++;
    }
  };
  proxy();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(client, t);
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong, 0);
  proxy().WaitForEncodes();
  proxy_.reset();
  for (const char* path : {"/a.css", "/b.css"}) {
    auto r = Zstd(path);
    std::string body(r.body);
    if (HeaderValue(r.headers, "Content-Encoding") == "zstd") body = Decoded(body);
    EXPECT_EQ(body, small_);
  }
}

TEST_F(EncodeBehindTest, ZeroCompressesEveryFillBeforeItsAnswer) {
  options_.encode_behind_max = 0;
  auto miss = Zstd("/a.css");
  EXPECT_EQ(HeaderValue(miss.headers, "Content-Encoding"), "zstd");
  EXPECT_EQ(store_->stats().entries, 1u);
  EXPECT_EQ(proxy().Metrics().encode_behind, 0u);
}

}  // namespace
}  // namespace ferry::cache
