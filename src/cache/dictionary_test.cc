#include "cache/dictionary.h"

#include <gtest/gtest.h>

namespace ferry::cache {
namespace {

TEST(DictionaryTest, ParsesUseAsDictionary) {
  auto m = ParseUseAsDictionary(
      R"(match="/static/app.*.js", match-dest=("script" "worker"), id="v1 \"a\"")");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->match, "/static/app.*.js");
  EXPECT_EQ(m->match_dest, (std::vector<std::string>{"script", "worker"}));
  EXPECT_EQ(m->id, "v1 \"a\"");
  EXPECT_EQ(m->type, "raw");
  // Round trip.
  auto again = ParseUseAsDictionary(FormatUseAsDictionary(*m));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->match, m->match);
  EXPECT_EQ(again->match_dest, m->match_dest);
  EXPECT_EQ(again->id, m->id);
  // Unknown members and parameters are ignored; type is kept.
  m = ParseUseAsDictionary(R"(foo=1;x=?0, match="/a/*", type=future, bar)");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->type, "future");
  for (const char* bad :
       {"", R"(match=/a/*)", R"(match="")", R"(id="x")", R"(match="/a", )", R"(match="/a)",
        R"(match="/a" x)", R"(match="/a", match-dest=("a")", R"(match="/a", match=1)"}) {
    EXPECT_FALSE(ParseUseAsDictionary(bad).ok()) << bad;
  }
}

TEST(DictionaryTest, ParsesAvailableDictionaryAndId) {
  Sha256Digest h = Sha256("dictionary");
  auto got = ParseAvailableDictionary(":" + Base64Encode(h) + ":");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, h);
  EXPECT_FALSE(ParseAvailableDictionary(Base64Encode(h)).has_value());  // not an sf-binary
  EXPECT_FALSE(ParseAvailableDictionary(":" + Base64Encode(std::string(31, 'a')) + ":")
                   .has_value());  // 31 bytes
  EXPECT_FALSE(ParseAvailableDictionary(":!!:").has_value());
  std::string unpadded = Base64Encode(h);
  while (unpadded.back() == '=') unpadded.pop_back();
  EXPECT_EQ(ParseAvailableDictionary(":" + unpadded + ":").value_or(Sha256Digest{}), h);
  // The last of a key given twice counts.
  EXPECT_EQ(ParseUseAsDictionary(R"(match="/a", match="/b")").value().match, "/b");
  EXPECT_EQ(ParseDictionaryId(R"("abc")").value_or("?"), "abc");
  EXPECT_FALSE(ParseDictionaryId("abc").has_value());
}

TEST(DictionaryTest, ResolvesAndMatchesPatterns) {
  EXPECT_EQ(ResolveMatch("/static/app.*.js", "/static/app.v1.js", "h", false).value_or("?"),
            "/static/app.*.js");
  EXPECT_EQ(ResolveMatch("app.*.js?x=*", "/static/app.v1.js", "h", false).value_or("?"),
            "/static/app.*.js");
  EXPECT_EQ(ResolveMatch("https://h:8443/a/*", "/a/1", "H:8443", true).value_or("?"), "/a/*");
  EXPECT_FALSE(ResolveMatch("https://other/a/*", "/a/1", "h", true).has_value());  // another origin
  EXPECT_FALSE(ResolveMatch("http://h/a/*", "/a/1", "h", true).has_value());       // another scheme
  EXPECT_FALSE(ResolveMatch("/a/:name.js", "/a/1", "h", false).has_value());  // URLPattern groups
  EXPECT_FALSE(ResolveMatch("/a/(\\d+).js", "/a/1", "h", false).has_value());
  EXPECT_TRUE(ResolveMatch("/a/b\\:c.js", "/a/1", "h", false).has_value());

  EXPECT_TRUE(PathMatches("/static/app.*.js", "/static/app.v2.js"));
  EXPECT_TRUE(PathMatches("/static/app.*.js", "/static/app.v2.js?cb=1"));
  EXPECT_TRUE(PathMatches("/static/*", "/static/a/b/c"));
  EXPECT_TRUE(PathMatches("/a/*/*.js", "/a/b/c.js"));
  EXPECT_FALSE(PathMatches("/static/app.*.js", "/static/app.v2.css"));
  EXPECT_FALSE(PathMatches("/static/app.*.js", "/other/app.v2.js"));
  EXPECT_FALSE(PathMatches("/a", "/ab"));
  EXPECT_TRUE(PathMatches("/a\\*b", "/a*b"));
  EXPECT_FALSE(PathMatches("/a\\*b", "/axb"));
}

TEST(DictionaryTest, DerivesPatternsFromVersionedNames) {
  struct Case {
    const char* path;
    const char* want;  // "" for none
  } cases[] = {
      {"/static/app.3f2a9c1b.js", "/static/app.*.js"},
      {"/js/jquery-3.6.1.min.js", "/js/jquery-*.min.js"},
      {"/app.v1.js", "/app.*.js"},
      {"/assets/main-BdF3x9Qk.js", "/assets/main-*.js"},
      {"/assets/index_2024.css?x=1", "/assets/index_*.css"},
      {"/static/app.js", ""},
      {"/static/vendor.bundle.js", ""},
      {"/static/3f2a9c1b.js", ""},  // nothing but the version: no name to keep
      {"/static/jquery.min.js", ""},
      {"/a(b).v1.js", "/a\\(b\\).*.js"},
  };
  for (const auto& c : cases) EXPECT_EQ(VersionedPattern(c.path).value_or(""), c.want) << c.path;
}

TEST(DictionaryTest, SecureContexts) {
  EXPECT_TRUE(SecureContext(true, "example.com"));
  EXPECT_FALSE(SecureContext(false, "example.com"));
  for (const char* h : {"localhost", "localhost:8080", "app.localhost", "127.0.0.1", "127.1.2.3:80",
                        "[::1]:8080"}) {
    EXPECT_TRUE(SecureContext(false, h)) << h;
  }
  for (const char* h : {"127.example.com", "localhost.example.com", "[::2]", "10.0.0.1"}) {
    EXPECT_FALSE(SecureContext(false, h)) << h;
  }
}

TEST(DictionaryTest, AppliesOnlyWithinItsRules) {
  DictionaryInfo d;
  d.host = "localhost:8080";
  d.pattern = "/static/app.*.js";
  d.mark.match = d.pattern;
  d.expires = 1000;
  DictionaryRequest r{.host = "LOCALHOST:8080",
                      .path = "/static/app.v2.js",
                      .dest = "script",
                      .id = "",
                      .now = 999};
  EXPECT_TRUE(DictionaryApplies(d, r));
  auto with = [&](auto change) {
    DictionaryRequest x = r;
    change(x);
    return DictionaryApplies(d, x);
  };
  EXPECT_FALSE(with([](auto& x) { x.host = "localhost:8081"; }));  // another origin
  EXPECT_FALSE(with([](auto& x) { x.tls = true; }));               // another scheme
  EXPECT_FALSE(with([](auto& x) { x.path = "/static/other.js"; }));
  EXPECT_FALSE(with([](auto& x) { x.now = 1000; }));  // expired
  d.mark.match_dest = {"script"};
  EXPECT_TRUE(DictionaryApplies(d, r));
  EXPECT_FALSE(with([](auto& x) { x.dest = "document"; }));
  EXPECT_FALSE(with([](auto& x) { x.dest = ""; }));
  d.mark.id = "v1";
  EXPECT_FALSE(DictionaryApplies(d, r));
  EXPECT_TRUE(with([](auto& x) { x.id = "v1"; }));
  d.mark.type = "other";
  EXPECT_FALSE(with([](auto& x) { x.id = "v1"; }));
}

TEST(DictionaryTest, DczHeaderIsASkippableFrameWithTheHash) {
  Sha256Digest h = Sha256("x");
  std::string head = DczHeader(h);
  ASSERT_EQ(head.size(), kDczHeaderSize);
  EXPECT_EQ(head.substr(0, 8), std::string("\x5e\x2a\x4d\x18\x20\x00\x00\x00", 8));
  EXPECT_EQ(head.substr(8), AsBytes(h));
  EXPECT_EQ(DczEtag("\"abc\"", h), "\"abc-dcz-" + HexLower(h).substr(0, 8) + "\"");
  EXPECT_EQ(DczEtag("W/\"abc\"", h), "W/\"abc-dcz-" + HexLower(h).substr(0, 8) + "\"");
  EXPECT_EQ(DczEtag("", h), "");
}

}  // namespace
}  // namespace ferry::cache
