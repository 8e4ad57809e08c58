#include "cache/routing.h"

#include <gtest/gtest.h>

namespace ferry::cache {
namespace {

TEST(RoutingTest, ParsesTheCommandLine) {
  auto r = ParseRouting("http://127.0.0.1:8080/base/", {"Static.Example=https://cdn.test", "api.test:8443=http://10.0.0.1:9000"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->fallback);
  EXPECT_EQ(r->fallback->endpoint.ToString(), "http://127.0.0.1:8080");
  EXPECT_EQ(r->fallback->base_path, "/base");
  ASSERT_EQ(r->hosts.size(), 2u);
  EXPECT_EQ(r->hosts[0].first, "static.example");
  EXPECT_EQ(r->hosts[1].first, "api.test");
  EXPECT_TRUE(r->hosts[0].second.endpoint.tls);

  for (auto [origin, map] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"", {}},
           {"ftp://x", {}},
           {"http://", {}},
           {"http://o.test/p?q=1", {}},
           {"", {"nohost"}},
           {"", {"=http://o.test"}},
           {"", {"a.test=http://o.test", "A.test=http://p.test"}},
           {"", {"a.test=gopher://o.test"}}}) {
    auto bad = ParseRouting(origin, map);
    ASSERT_FALSE(bad.ok()) << origin;
    EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(bad.status().ToString().find('\n'), std::string::npos) << "one line";
  }
}

TEST(RoutingTest, RoutesOnlyToConfiguredOrigins) {
  auto r = *ParseRouting("", {"a.test=http://127.0.0.1:1111", "b.test=http://127.0.0.1:2222/pre"});
  auto a = RouteRequest(r, "A.test:80", "/x/y.html?v=1");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->origin->endpoint.port, 1111);
  EXPECT_EQ(a->target, "/x/y.html?v=1");
  EXPECT_EQ(a->cache_key, "http://127.0.0.1:1111/x/y.html?v=1");
  auto b = RouteRequest(r, "b.test", "/x");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->target, "/pre/x");
  // Absolute-form: its authority is the host, whatever Host says.
  auto c = RouteRequest(r, "a.test", "http://b.test/z");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->origin->endpoint.port, 2222);
  EXPECT_EQ(c->target, "/pre/z");
  // Not an open proxy: any other host goes nowhere.
  for (auto [host, target] : std::vector<std::pair<const char*, const char*>>{
           {"evil.test", "/"}, {"a.test", "http://evil.test/"}, {"", "/"},
           {"a.test", "http://user@a.test/"}}) {
    auto no = RouteRequest(r, host, target);
    EXPECT_FALSE(no.ok()) << host << " " << target;
  }
  EXPECT_EQ(RouteRequest(r, "evil.test", "/").status().code(), ErrorCode::kNotFound);
}

TEST(RoutingTest, TheDefaultOriginTakesEveryOtherHost) {
  auto r = *ParseRouting("http://127.0.0.1:9/", {"a.test=http://127.0.0.1:1111"});
  auto x = RouteRequest(r, "whatever.test", "http://elsewhere.test/p");
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(x->origin->endpoint.port, 9) << "the request never names the destination";
  EXPECT_EQ(x->cache_key, "http://127.0.0.1:9/p");
  EXPECT_EQ(RouteRequest(r, "a.test", "/").value().origin->endpoint.port, 1111);
  EXPECT_EQ(RouteRequest(r, "h", "http://h.test?q").value().target, "/?q");
}

TEST(RoutingTest, MalformedTargetsAreBadRequests) {
  auto r = *ParseRouting("http://127.0.0.1:9", {});
  for (const char* t : {"", "*", "example.test:443", "/a b", "/a\tb", "/a\x01", "ftp://x/"}) {
    auto bad = RouteRequest(r, "h", t);
    ASSERT_FALSE(bad.ok()) << t;
    EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument) << t;
  }
}

}  // namespace
}  // namespace ferry::cache
