#include "cache/freshness.h"

#include <gtest/gtest.h>

namespace ferry::cache {
namespace {

using namespace std::chrono;

TEST(CacheControlTest, ParsesDirectives) {
  CacheControl c = ParseCacheControl(" Public, max-age=60 ,S-MAXAGE=\"120\", no-transform, x-ext=1");
  EXPECT_TRUE(c.public_);
  EXPECT_EQ(c.max_age, Seconds(60));
  EXPECT_EQ(c.s_maxage, Seconds(120));
  EXPECT_TRUE(c.no_transform);
  EXPECT_FALSE(c.no_store || c.no_cache || c.private_ || c.must_revalidate);
  c = ParseCacheControl("no-cache=\"set-cookie\", private, proxy-revalidate, no-store");
  EXPECT_TRUE(c.no_cache && c.private_ && c.must_revalidate && c.no_store);
  c = ParseCacheControl("max-age=abc");
  EXPECT_FALSE(c.max_age);
  EXPECT_TRUE(c.max_age_invalid);
  c = ParseCacheControl("max-age=99999999999999999999");
  EXPECT_EQ(c.max_age, Seconds(int64_t{1} << 31)) << "saturates";
  EXPECT_FALSE(ParseCacheControl("no-transformx").no_transform);
  EXPECT_FALSE(ParseCacheControl("").no_cache);
}

TEST(StoreTest, Table) {
  struct Case {
    const char* name;
    void (*edit)(StoreFacts&);
    bool store;
    const char* reason;
  };
  const Case cases[] = {
      {"max-age", [](StoreFacts& f) { f.response.max_age = Seconds(60); }, true, "explicit freshness"},
      {"expires", [](StoreFacts& f) { f.has_expires = true; }, true, "explicit freshness"},
      {"public", [](StoreFacts& f) { f.response.public_ = true; }, true, "explicit freshness"},
      {"default ttl", [](StoreFacts&) {}, true, "default ttl"},
      {"vary accept-encoding", [](StoreFacts& f) { f.vary = " accept-encoding ,, ACCEPT-ENCODING"; }, true, "default ttl"},
      {"404 by default ttl", [](StoreFacts& f) { f.status = 404; }, true, "default ttl"},
      {"last-modified", [](StoreFacts& f) { f.has_last_modified = true; }, true, "heuristic freshness"},
      {"301 with last-modified", [](StoreFacts& f) { f.status = 301; f.has_last_modified = true; }, true, "heuristic freshness"},
      {"no-cache with etag", [](StoreFacts& f) { f.response.no_cache = true; f.has_validator = true; f.status = 500; }, true, "stored to revalidate"},
      {"authorization + public", [](StoreFacts& f) { f.authorization = true; f.response.public_ = true; }, true, "explicit freshness"},
      {"authorization + s-maxage", [](StoreFacts& f) { f.authorization = true; f.response.s_maxage = Seconds(5); }, true, "explicit freshness"},

      {"POST", [](StoreFacts& f) { f.method = "POST"; }, false, "method"},
      {"HEAD", [](StoreFacts& f) { f.method = "HEAD"; }, false, "method"},
      {"response no-store", [](StoreFacts& f) { f.response.no_store = true; f.response.max_age = Seconds(60); }, false, "no-store"},
      {"request no-store", [](StoreFacts& f) { f.request.no_store = true; }, false, "no-store"},
      {"private", [](StoreFacts& f) { f.response.private_ = true; f.response.max_age = Seconds(60); }, false, "private"},
      {"authorization", [](StoreFacts& f) { f.authorization = true; f.response.max_age = Seconds(60); }, false, "authorization"},
      {"206", [](StoreFacts& f) { f.status = 206; f.response.max_age = Seconds(60); }, false, "partial content"},
      {"vary *", [](StoreFacts& f) { f.vary = " * "; }, false, "vary *"},
      {"vary accept-encoding, *", [](StoreFacts& f) { f.vary = "Accept-Encoding, *"; }, false, "vary *"},
      {"vary user-agent", [](StoreFacts& f) { f.vary = "Accept-Encoding, User-Agent"; }, false, "varies on a request field"},
      {"vary cookie", [](StoreFacts& f) { f.vary = "cookie"; }, false, "varies on a request field"},
      {"set-cookie", [](StoreFacts& f) { f.set_cookie = true; }, false, "set-cookie"},
      {"500 needs explicit freshness", [](StoreFacts& f) { f.status = 500; }, false, "status needs explicit freshness"},
      {"302 needs explicit freshness", [](StoreFacts& f) { f.status = 302; }, false, "status needs explicit freshness"},
      {"302 with last-modified", [](StoreFacts& f) { f.status = 302; f.has_last_modified = true; }, false, "status needs explicit freshness"},
      {"500 with last-modified", [](StoreFacts& f) { f.status = 500; f.has_last_modified = true; }, false, "status needs explicit freshness"},
  };
  CacheSettings s;
  s.default_ttl = Seconds(300);
  for (const Case& c : cases) {
    StoreFacts f;
    c.edit(f);
    StoreDecision d = DecideStore(f, s);
    EXPECT_EQ(d.store, c.store) << c.name;
    EXPECT_STREQ(d.reason, c.reason) << c.name;
  }
  s.default_ttl = Seconds(0);
  EXPECT_FALSE(DecideStore(StoreFacts{}, s).store) << "no freshness, no default";
  StoreFacts lm;
  lm.has_last_modified = true;
  EXPECT_TRUE(DecideStore(lm, s).store) << "Last-Modified alone: heuristic freshness with the defaults";
  s.heuristic_fraction = 0;
  EXPECT_FALSE(DecideStore(lm, s).store) << "heuristic off, no default ttl";
}

TEST(FreshnessTest, LifetimeInRfcOrder) {
  CacheSettings s;
  s.default_ttl = Seconds(300);
  SysSeconds t0 = sys_days(2026y / December / 2) + 12h;
  auto cc = [](const char* v) { return ParseCacheControl(v); };
  auto life = [&](const char* v, std::optional<SysSeconds> expires, bool has_expires,
                  std::optional<SysSeconds> date) {
    return FreshnessLifetime(cc(v), expires, has_expires, date, std::nullopt, t0, s).lifetime;
  };
  EXPECT_EQ(life("max-age=60, s-maxage=10", std::nullopt, false, std::nullopt), Seconds(10));
  EXPECT_EQ(life("max-age=60", t0 + 1h, true, t0), Seconds(60)) << "max-age beats Expires";
  EXPECT_EQ(life("", t0 + 1h, true, t0 - 10min), Seconds(70 * 60)) << "Expires - Date";
  EXPECT_EQ(life("", t0 + 1h, true, std::nullopt), Seconds(3600)) << "no Date: arrival time";
  EXPECT_EQ(life("", t0 - 1h, true, t0), Seconds(0));
  EXPECT_EQ(life("", std::nullopt, true, t0), Seconds(0)) << "Expires: 0";
  EXPECT_EQ(life("", std::nullopt, false, t0), Seconds(300)) << "default ttl";
  EXPECT_EQ(life("no-cache, max-age=60", std::nullopt, false, t0), Seconds(0));
  EXPECT_EQ(life("max-age=x", std::nullopt, false, t0), Seconds(0)) << "invalid max-age: stale";
}

TEST(FreshnessTest, HeuristicFromLastModified) {
  CacheSettings s;  // 10%, at most a day
  s.default_ttl = Seconds(300);
  SysSeconds t0 = sys_days(2026y / December / 2) + 12h;
  struct Case {
    const char* name;
    const char* cache_control;
    bool has_expires;
    std::optional<SysSeconds> date, last_modified;
    Seconds lifetime;
    bool heuristic;
  };
  const Case cases[] = {
      {"10% of the age at Date", "", false, t0, t0 - 10h, Seconds(3600), true},
      {"no Date: the arrival time", "", false, std::nullopt, t0 - 100s, Seconds(10), true},
      {"capped at a day", "", false, t0, t0 - 24h * 365, Seconds(86400), true},
      {"Last-Modified in the future: 0", "", false, t0, t0 + 1h, Seconds(0), true},
      {"Last-Modified just now: 0", "", false, t0, t0, Seconds(0), true},
      {"max-age beats the heuristic", "max-age=7", false, t0, t0 - 10h, Seconds(7), false},
      {"Expires beats the heuristic", "", true, t0, t0 - 10h, Seconds(0), false},
      {"no-cache: 0", "no-cache", false, t0, t0 - 10h, Seconds(0), false},
      {"neither: the default ttl", "", false, t0, std::nullopt, Seconds(300), false},
  };
  for (const Case& c : cases) {
    Freshness f = FreshnessLifetime(ParseCacheControl(c.cache_control), std::nullopt, c.has_expires, c.date,
                                    c.last_modified, t0, s);
    EXPECT_EQ(f.lifetime, c.lifetime) << c.name;
    EXPECT_EQ(f.heuristic, c.heuristic) << c.name;
  }
  s.heuristic_fraction = 0.5;
  s.max_heuristic = Seconds(60);
  EXPECT_EQ(FreshnessLifetime({}, std::nullopt, false, t0, t0 - 100s, t0, s).lifetime, Seconds(50));
  EXPECT_EQ(FreshnessLifetime({}, std::nullopt, false, t0, t0 - 1000s, t0, s).lifetime, Seconds(60));
  s.heuristic_fraction = 0;
  EXPECT_EQ(FreshnessLifetime({}, std::nullopt, false, t0, t0 - 100s, t0, s).lifetime, Seconds(300));
}

TEST(FreshnessTest, AgeFollowsRfc9111) {
  SysSeconds req = sys_days(2026y / December / 2) + 12h;
  SysSeconds resp = req + 2s;
  // An origin response with no Age, Date = arrival: age grows with residence.
  EXPECT_EQ(CurrentAge(std::nullopt, resp, req, resp, resp + 10s), Seconds(12));
  // An upstream cache said Age: 100.
  EXPECT_EQ(CurrentAge(Seconds(100), resp, req, resp, resp), Seconds(102));
  // A Date in the past beyond the Age header: the apparent age wins.
  EXPECT_EQ(CurrentAge(Seconds(5), resp - 60s, req, resp, resp), Seconds(60));
  // A Date in the future (skewed origin clock) never makes it younger.
  EXPECT_EQ(CurrentAge(std::nullopt, resp + 3600s, req, resp, resp + 1s), Seconds(3));
  EXPECT_EQ(ParseAge("42"), Seconds(42));
  EXPECT_EQ(ParseAge("-1"), std::nullopt);
}

TEST(FreshnessTest, WhatRequestsAsk) {
  CacheControl none;
  EXPECT_TRUE(ServableWithoutRevalidation(none, none, Seconds(60), Seconds(59)));
  EXPECT_FALSE(ServableWithoutRevalidation(none, none, Seconds(60), Seconds(60)));
  EXPECT_FALSE(ServableWithoutRevalidation(ParseCacheControl("no-cache"), none, Seconds(60), Seconds(1)));
  EXPECT_FALSE(ServableWithoutRevalidation(ParseCacheControl("max-age=0"), none, Seconds(60), Seconds(0)));
  EXPECT_FALSE(ServableWithoutRevalidation(ParseCacheControl("max-age=10"), none, Seconds(60), Seconds(11)));
  EXPECT_TRUE(ServableWithoutRevalidation(ParseCacheControl("max-age=10"), none, Seconds(60), Seconds(9)));
  EXPECT_FALSE(ServableWithoutRevalidation(none, ParseCacheControl("no-cache"), Seconds(60), Seconds(1)));
}

}  // namespace
}  // namespace ferry::cache
