// The proxy's compression dictionaries (RFC 9842): marking, keeping, and
// dcz answers made once per (object, dictionary) and kept across restarts.
#include <gtest/gtest.h>

#include <thread>

#include "cache/dictionary.h"
#include "cache/proxy.h"
#include "cache/proxy_test_util.h"
#include "codec/zstd_codec.h"
#include "codec/zstd_dictionary.h"

namespace ferry::cache {
namespace {

using http::SetHeader;

// A script bundle; version n edits a few of its functions.
std::string Bundle(int n) {
  std::string s;
  for (int i = 0; i < 3000; ++i) {
    std::string body = "return a * " + std::to_string(i % 97) + " + b.length;";
    if (i % 1000 == 7 * n) body = "return a - " + std::to_string(n) + "; // edited";
    s += "function f" + std::to_string(i * 7919 % 100003) + "(a, b) { " + body + " }\n";
  }
  return s;
}

class ProxyDictionaryTest : public ProxyFixture {
 protected:
  void SetUp() override {
    ProxyFixture::SetUp();
    options_.encode_behind_max = 0;  // stored before the fill is answered
    options_.dictionaries.match = {"/static/app.*.js"};
    v1_ = Bundle(1);
    v2_ = Bundle(2);
    for (auto [path, body] :
         {std::pair{"/static/app.v1.js", &v1_}, std::pair{"/static/app.v2.js", &v2_}}) {
      upstream_.answers[path] = {200,
                                 {{"Content-Type", "application/javascript"},
                                  {"ETag", "\"e\""},
                                  {"Cache-Control", "max-age=600"}},
                                 *body};
    }
  }
  void Restart() {
    proxy_.reset();
    store_.reset();
    store_ = OpenTestStore(dir_);
  }
  // A browser's request for `path` on a loopback origin, holding `dict`.
  static ProxyRequest Browser(const std::string& path, const std::string& dict = "") {
    http::Headers h = {{"Host", "localhost:8080"},
                       {"Accept-Encoding", "gzip, deflate, br, zstd, dcb, dcz"},
                       {"Sec-Fetch-Dest", "script"}};
    if (!dict.empty())
      h.emplace_back("Available-Dictionary", ":" + Base64Encode(Sha256(dict)) + ":");
    return GetRequest(path, std::move(h));
  }
  uint64_t DczEncoded() {
    return proxy().Metrics().coding_encode_bytes[static_cast<size_t>(Coding::kDcz)];
  }

  std::string v1_, v2_;
};

TEST_F(ProxyDictionaryTest, ANewVersionGoesAsDczAgainstTheOldOnce) {
  ProxyResponse first = proxy().Handle(Browser("/static/app.v1.js"));
  EXPECT_EQ(HeaderValue(first.headers, "use-as-dictionary"), "match=\"/static/app.*.js\"");
  EXPECT_EQ(proxy().Metrics().dictionaries_kept, 1u);

  ProxyResponse plain = proxy().Handle(Browser("/static/app.v2.js"));  // no dictionary: zstd
  ASSERT_EQ(HeaderValue(plain.headers, "content-encoding"), "zstd");
  ProxyResponse r = proxy().Handle(Browser("/static/app.v2.js", v1_));
  ASSERT_EQ(r.status, 200);
  ASSERT_EQ(HeaderValue(r.headers, "content-encoding"), "dcz");
  EXPECT_EQ(HeaderValue(r.headers, "vary"), "Accept-Encoding, Available-Dictionary");
  EXPECT_EQ(HeaderValue(r.headers, "etag"), DczEtag("\"e\"", Sha256(v1_)));
  EXPECT_EQ(HeaderValue(r.headers, "accept-ranges"), "");
  std::string body(r.body);
  ASSERT_GT(body.size(), kDczHeaderSize);
  EXPECT_EQ(body.substr(0, kDczHeaderSize), DczHeader(Sha256(v1_)));
  auto decoded = codec::ZstdDecompressWithPrefix(body.substr(kDczHeaderSize), v1_, v2_.size());
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, v2_);
  EXPECT_LT(body.size() * 10, plain.body.size())
      << body.size() << " dcz, " << plain.body.size() << " zstd";
  EXPECT_EQ(DczEncoded(), v2_.size());

  // Made once: again from memory, then (after a restart) from disk.
  EXPECT_EQ(std::string(proxy().Handle(Browser("/static/app.v2.js", v1_)).body), body);
  EXPECT_EQ(DczEncoded(), v2_.size());
  Restart();
  ProxyResponse again = proxy().Handle(Browser("/static/app.v2.js", v1_));
  EXPECT_EQ(HeaderValue(again.headers, "content-encoding"), "dcz");
  EXPECT_EQ(std::string(again.body), body);
  EXPECT_EQ(DczEncoded(), 0u);
  EXPECT_EQ(upstream_.calls, 2);

  // A conditional request for the dcz answer.
  ProxyRequest cond = Browser("/static/app.v2.js", v1_);
  cond.headers.emplace_back("If-None-Match", DczEtag("\"e\"", Sha256(v1_)));
  EXPECT_EQ(proxy().Handle(cond).status, 304);
}

TEST_F(ProxyDictionaryTest, OrdinaryAnswersWhenNoDictionaryApplies) {
  proxy().Handle(Browser("/static/app.v1.js"));
  auto coding = [&](ProxyRequest req) {
    return HeaderValue(proxy().Handle(req).headers, "content-encoding");
  };
  EXPECT_EQ(coding(Browser("/static/app.v2.js", "bytes nobody served")), "zstd");  // unknown
  EXPECT_EQ(proxy().Metrics().dictionary_misses, 1u);
  ProxyRequest other_origin = Browser("/static/app.v2.js", v1_);
  SetHeader(&other_origin.headers, "Host", "127.0.0.1:8080");
  EXPECT_EQ(coding(other_origin), "zstd");
  ProxyRequest no_dcz = Browser("/static/app.v2.js", v1_);
  SetHeader(&no_dcz.headers, "Accept-Encoding", "gzip, br, zstd");
  EXPECT_EQ(coding(no_dcz), "zstd");
  ProxyRequest insecure = Browser("/static/app.v2.js", v1_);
  SetHeader(&insecure.headers, "Host", "example.com");
  EXPECT_EQ(coding(insecure), "zstd");
  ProxyRequest ranged = Browser("/static/app.v2.js", v1_);
  ranged.headers.emplace_back("Range", "bytes=0-9");
  EXPECT_EQ(proxy().Handle(ranged).status, 206);
  upstream_.answers["/static/other.js"] = upstream_.answers["/static/app.v2.js"];
  EXPECT_EQ(coding(Browser("/static/other.js", v1_)), "zstd");  // outside the match
  EXPECT_EQ(DczEncoded(), 0u);
  // Insecure contexts get no mark.
  ProxyRequest plain_http = Browser("/static/app.v1.js");
  SetHeader(&plain_http.headers, "Host", "example.com");
  EXPECT_EQ(HeaderValue(proxy().Handle(plain_http).headers, "use-as-dictionary"), "");
  plain_http.tls = true;
  EXPECT_NE(HeaderValue(proxy().Handle(plain_http).headers, "use-as-dictionary"), "");
}

TEST_F(ProxyDictionaryTest, TheOriginsMarkWithIdAndDestination) {
  options_.dictionaries.match.clear();
  upstream_.answers["/static/app.v1.js"].headers.emplace_back(
      "Use-As-Dictionary", "match=\"app.*.js\", match-dest=(\"script\"), id=\"bundle-1\"");
  ProxyResponse first = proxy().Handle(Browser("/static/app.v1.js"));
  EXPECT_EQ(
      HeaderValue(first.headers, "use-as-dictionary"),
      "match=\"app.*.js\", match-dest=(\"script\"), id=\"bundle-1\"");  // the origin's, as it was
  auto answer = [&](auto change) {
    ProxyRequest req = Browser("/static/app.v2.js", v1_);
    change(req);
    return proxy().Handle(req);
  };
  EXPECT_EQ(HeaderValue(answer([](auto&) {}).headers, "content-encoding"),
            "zstd");  // no Dictionary-ID
  ProxyResponse r =
      answer([](auto& q) { q.headers.emplace_back("Dictionary-ID", "\"bundle-1\""); });
  EXPECT_EQ(HeaderValue(r.headers, "content-encoding"), "dcz");
  EXPECT_EQ(HeaderValue(r.headers, "vary"), "Accept-Encoding, Available-Dictionary, Dictionary-ID");
  EXPECT_EQ(HeaderValue(answer([](auto& q) {
                          q.headers.emplace_back("Dictionary-ID", "\"bundle-1\"");
                          SetHeader(&q.headers, "Sec-Fetch-Dest", "style");
                        }).headers,
                        "content-encoding"),
            "zstd");
}

TEST_F(ProxyDictionaryTest, AnAnswerWithoutLifetimeIsNotKept) {
  upstream_.answers["/static/app.v1.js"].headers = {{"Content-Type", "application/javascript"},
                                                    {"Cache-Control", "max-age=0"}};
  EXPECT_EQ(HeaderValue(proxy().Handle(Browser("/static/app.v1.js")).headers, "use-as-dictionary"),
            "match=\"/static/app.*.js\"");
  EXPECT_EQ(proxy().Metrics().dictionaries_kept, 0u);  // no lifetime: not kept
  EXPECT_EQ(
      HeaderValue(proxy().Handle(Browser("/static/app.v2.js", v1_)).headers, "content-encoding"),
      "zstd");
}

TEST_F(ProxyDictionaryTest, ConcurrentRequestsMakeOnePair) {
  proxy().Handle(Browser("/static/app.v1.js"));
  proxy().Handle(Browser("/static/app.v2.js"));
  std::vector<std::thread> threads;
  std::atomic<int> dcz{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      if (HeaderValue(proxy().Handle(Browser("/static/app.v2.js", v1_)).headers,
                      "content-encoding") == "dcz")
        dcz++;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(dcz, 8);
  EXPECT_EQ(DczEncoded(), v2_.size());
}

TEST_F(ProxyDictionaryTest, ALowerTierIsSentTheMarkButTheParentKeepsNothing) {
  ProxyRequest tier =
      GetRequest("/static/app.v1.js", {{"Host", "example.com"}, {"X-Ferry-Tier", "stored"}});
  ProxyResponse r = proxy().Handle(tier);
  EXPECT_EQ(HeaderValue(r.headers, "use-as-dictionary"), "match=\"/static/app.*.js\"");
  EXPECT_EQ(proxy().Metrics().dictionaries_kept, 0u);  // the hop facing the client keeps it
}

TEST_F(ProxyDictionaryTest, OffMeansNoMarksAndNoDcz) {
  options_.dictionaries.enabled = false;
  options_.dictionaries.match.clear();
  EXPECT_EQ(HeaderValue(proxy().Handle(Browser("/static/app.v1.js")).headers, "use-as-dictionary"),
            "");
  EXPECT_EQ(
      HeaderValue(proxy().Handle(Browser("/static/app.v2.js", v1_)).headers, "content-encoding"),
      "zstd");
}

TEST_F(ProxyDictionaryTest, OnlySharedAnswersOfTheCachesOwnZstdTakePart) {
  proxy().Handle(Browser("/static/app.v1.js"));
  auto headers = [&](const char* path, http::Headers origin_headers) {
    upstream_.answers[path] = {200, std::move(origin_headers), v2_};
    return proxy().Handle(Browser(path, v1_)).headers;
  };
  // Private, no-store: neither marked nor kept nor sent as dcz.
  auto h = headers("/static/app.private.js", {{"Content-Type", "application/javascript"},
                                              {"Cache-Control", "private, max-age=600"}});
  EXPECT_NE(HeaderValue(h, "content-encoding"), "dcz");
  h = headers("/static/app.nostore.js", {{"Content-Type", "application/javascript"},
                                         {"Cache-Control", "no-store"},
                                         {"Use-As-Dictionary", "match=\"/static/*\""}});
  EXPECT_NE(HeaderValue(h, "content-encoding"), "dcz");
  // Encoded by the origin, or no-transform: stored as they came, never dcz.
  auto gz = codec::ZstdCompress(v2_, 3);
  upstream_.answers["/static/app.z.js"] = {200,
                                           {{"Content-Type", "application/javascript"},
                                            {"Content-Encoding", "zstd"},
                                            {"Cache-Control", "max-age=600"}},
                                           *gz};
  EXPECT_EQ(
      HeaderValue(proxy().Handle(Browser("/static/app.z.js", v1_)).headers, "content-encoding"),
      "zstd");
  h = headers("/static/app.nt.js", {{"Content-Type", "application/javascript"},
                                    {"Cache-Control", "max-age=600, no-transform"}});
  EXPECT_EQ(HeaderValue(h, "content-encoding"), "");
  EXPECT_EQ(proxy().Metrics().dictionaries_kept, 1u);  // v1 only
  EXPECT_EQ(DczEncoded(), 0u);
  // The origin is never asked for a dictionary's coding.
  EXPECT_EQ(HeaderValue(upstream_.last_headers, "available-dictionary"), "");
}

TEST_F(ProxyDictionaryTest, EachOriginHasItsOwnDictionaries) {
  ProxyRequest other = Browser("/static/app.v1.js");
  SetHeader(&other.headers, "Host", "127.0.0.1:8080");
  proxy().Handle(Browser("/static/app.v1.js"));
  proxy().Handle(other);  // the same bytes, another origin
  EXPECT_EQ(proxy().Metrics().dictionaries_kept, 2u);
  ProxyRequest v2_other = Browser("/static/app.v2.js", v1_);
  SetHeader(&v2_other.headers, "Host", "127.0.0.1:8080");
  EXPECT_EQ(
      HeaderValue(proxy().Handle(Browser("/static/app.v2.js", v1_)).headers, "content-encoding"),
      "dcz");
  EXPECT_EQ(HeaderValue(proxy().Handle(v2_other).headers, "content-encoding"), "dcz");
  // A request in absolute form names no origin of its own: no dictionary.
  ProxyRequest absolute = Browser("/static/app.v2.js", v1_);
  absolute.target = "http://origin.test:8000/static/app.v2.js";
  EXPECT_EQ(HeaderValue(proxy().Handle(absolute).headers, "content-encoding"), "zstd");
}

TEST_F(ProxyDictionaryTest, TheEventLoopNeverHashesOrCompresses) {
  proxy().Handle(GetRequest("/static/app.v1.js"));  // filled (no Host: not kept)
  proxy().Handle(GetRequest("/static/app.v2.js"));
  // Keeping v1 and making v2's dcz are a worker's: the loop declines both.
  EXPECT_FALSE(proxy().HandleFromMemory(Browser("/static/app.v1.js")).has_value());
  proxy().Handle(Browser("/static/app.v1.js"));
  EXPECT_TRUE(proxy().HandleFromMemory(Browser("/static/app.v1.js")).has_value());  // kept now
  EXPECT_FALSE(proxy().HandleFromMemory(Browser("/static/app.v2.js", v1_)).has_value());
  EXPECT_EQ(DczEncoded(), 0u);
  proxy().Handle(Browser("/static/app.v2.js", v1_));
  auto r = proxy().HandleFromMemory(Browser("/static/app.v2.js", v1_));  // made: from memory
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(HeaderValue(r->headers, "content-encoding"), "dcz");
  // An origin's mark the cache may not keep (plain http, not loopback)
  // leaves hits on the loop.
  upstream_.answers["/static/app.v1.js"].headers.emplace_back("Use-As-Dictionary",
                                                              "match=\"/static/*\"");
  proxy().Handle(GetRequest("/static/app.v9.js"));
  upstream_.answers["/static/app.v9.js"] = upstream_.answers["/static/app.v1.js"];
  ProxyRequest insecure = GetRequest("/static/app.v9.js", {{"Host", "example.com"}});
  proxy().Handle(insecure);
  EXPECT_TRUE(proxy().HandleFromMemory(insecure).has_value());
}

TEST_F(ProxyDictionaryTest, AParentGivesTheDictionariesItSentLowerTiersToAdminsOnly) {
  options_.admin_allow = std::move(ParseAllowList({"127.0.0.1"})).value();
  ProxyRequest tier =
      GetRequest("/static/app.v1.js", {{"Host", "example.com"}, {"X-Ferry-Tier", "stored"}});
  proxy().Handle(tier);
  ProxyRequest ask =
      GetRequest("/_ferry/dictionary/" + HexLower(Sha256(v1_)), {{"Host", "example.com"}});
  ProxyResponse r = proxy().Handle(ask);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(HeaderValue(r.headers, "use-as-dictionary"), "match=\"/static/app.*.js\"");
  EXPECT_EQ(HeaderValue(r.headers, "x-ferry-dictionary-path"), "/static/app.v1.js");
  EXPECT_EQ(codec::ZstdDecompress(std::string(r.body)).value(), v1_);
  ProxyRequest other_host = ask;
  SetHeader(&other_host.headers, "Host", "other.example");
  EXPECT_EQ(proxy().Handle(other_host).status, 404);  // another origin's
  ask.peer = "10.0.0.9";
  EXPECT_EQ(proxy().Handle(ask).status, 403);
}

}  // namespace
}  // namespace ferry::cache
