#include "migrate/filter.h"

#include <gtest/gtest.h>

#include <chrono>
#include <initializer_list>
#include <string>

namespace ferry::migrate {
namespace {

struct GlobCase {
  const char* pattern;
  const char* key;
  bool match;
};

void ExpectGlobs(std::initializer_list<GlobCase> cases) {
  for (const GlobCase& c : cases) {
    EXPECT_EQ(GlobMatch(c.pattern, c.key), c.match)
        << "pattern \"" << c.pattern << "\" key \"" << c.key << "\"";
  }
}

TEST(Glob, UnanchoredMatchesTheKeyOrASuffixAfterASlash) {
  ExpectGlobs({
      {"*.jpg", "a.jpg", true},
      {"*.jpg", "a/b/c.jpg", true},
      {"*.jpg", "a/b/c.jpeg", false},
      {"*.jpg", "a.jpg/b", false},
      {"a/*.jpg", "x/a/b.jpg", true},
      {"a/*.jpg", "xa/b.jpg", false},  // a suffix starts right after a '/'
      {"b", "a//b", true},
      {"*", "a/b", true},
      {"a.jpg", "A.JPG", false},  // case-sensitive
      {"a.c", "abc", false},      // no regex metacharacters
      {"(a|b)", "(a|b)", true},
      {".*", "x/.hidden", true},
  });
}

TEST(Glob, ALeadingSlashAnchors) {
  ExpectGlobs({
      {"/*.jpg", "a.jpg", true},
      {"/*.jpg", "a/b.jpg", false},
      {"/a/*.jpg", "a/b.jpg", true},
      {"/a/*.jpg", "x/a/b.jpg", false},
      {"/*", "a/b", false},
      {"/", "a", false},
  });
}

TEST(Glob, DoubleStarCrossesSegmentsAndStarDoesNot) {
  ExpectGlobs({
      {"**", "a/b/c", true},
      {"**.jpg", "a/b/c.jpg", true},
      {"/a/**", "a/b/c/d.txt", true},
      {"/a/**", "a/", true},
      {"/a/**", "a", false},
      {"/a/**/b", "a/x/y/b", true},
      {"/a/**/b", "a/b", false},
      {"/a/**b", "a/b", true},
      {"/a/*", "a/b/c", false},
      {"/a/***", "a/b/c", true},  // a longer run of stars is **
  });
}

TEST(Glob, QuestionMarkIsOneCharacterNeverASlash) {
  ExpectGlobs({
      {"?.txt", "a.txt", true},
      {"?.txt", "ab.txt", false},
      {"/a?b", "a/b", false},
      {"/?", "", false},
  });
}

TEST(Glob, Classes) {
  ExpectGlobs({
      {"[abc].txt", "b.txt", true},
      {"[abc].txt", "d.txt", false},
      {"/[a-c]x", "cx", true},
      {"/[!a-c]x", "dx", true},
      {"/[!a-c]x", "ax", false},
      {"/[^a]x", "bx", true},
      {"/a[!b]c", "a/c", false},  // a class never matches '/'
      {"/[]]", "]", true},
      {"/[\\]]", "]", true},
      {"/[a\\-z]", "-", true},
      {"/[a\\-z]", "m", false},
  });
}

TEST(Glob, Alternation) {
  ExpectGlobs({
      {"*.{jpg,png}", "x/y.png", true},
      {"*.{jpg,png}", "y.gif", false},
      {"{a,b}/*", "b/c", true},
      {"/{a,b}/*", "c/b/c", false},
      {"{*.jpg,docs/**}", "docs/x/y.txt", true},
      {"{*.jpg,docs/**}", "src/x.txt", false},
      {"/x{,.bak}", "x", true},
      {"/x{,.bak}", "x.bak", true},
      {"/x{,.bak}", "x.ba", false},
      {"/a,b", "a,b", true},  // ',' outside braces is literal
  });
}

TEST(Glob, Escapes) {
  ExpectGlobs({
      {"/\\*", "*", true},
      {"/\\*", "a", false},
      {"/a\\?", "a?", true},
      {"/a\\?", "ab", false},
      {"/\\{a\\}", "{a}", true},
      {"\\/a", "x/a", false},  // an escaped leading '/' is a literal, not an anchor
      {"\\/a", "x//a", true},
  });
}

TEST(Glob, UnicodeKeysTakeWholeCodePoints) {
  ExpectGlobs({
      {"*.jpg", "фото/снимок.jpg", true},
      {"/фото/?.jpg", "фото/я.jpg", true},
      {"/??.txt", "日本.txt", true},
      {"/?.txt", "日本.txt", false},
      {"/[日月]", "月", true},
      {"/[а-я]*", "привет", true},
      {"/[а-я]*", "Привет", false},
      {"*🙂*", "a/b🙂c", true},
      {"/?", "\xff", true},  // an invalid byte is one character
      {"/\xff", "\xff", true},
      {"/\xc3", "\xc3\xa9", false},  // a lead byte does not match a whole "é"
  });
}

TEST(Glob, PlusPercentAndSpacesAreLiteral) {
  ExpectGlobs({
      {"*+*", "a+b", true},
      {"/a+b.txt", "a+b.txt", true},
      {"/a+b.txt", "a b.txt", false},
      {"*%20*", "dir/a%20b", true},
      {"/my file.txt", "my file.txt", true},
      {"my *.txt", "d/my notes.txt", true},
  });
}

TEST(Glob, DoubleSlashesAndEmptySegments) {
  ExpectGlobs({
      {"/a//b", "a//b", true},
      {"/a/*/b", "a//b", true},  // * matches an empty segment
      {"/a/?/b", "a//b", false},
      {"/a/b", "a//b", false},
      {"*/", "a/b/", true},
      {"//x", "/x", true},
      {"/x", "/x", false},
      {"x", "/x", true},
  });
}

TEST(Glob, NoExponentialBlowup) {
  std::string key(1024, 'a');
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(GlobMatch("**a**a**a**b", key));
  EXPECT_FALSE(GlobMatch("*a*a*a*a*a*a*a*a*b", key));
  EXPECT_FALSE(GlobMatch("/{*a,a*}{*a,a*}{*a,a*}*b", key));
  key.back() = 'b';
  EXPECT_TRUE(GlobMatch("**a**a**a**b", key));
  EXPECT_TRUE(GlobMatch("*a*a*a*a*a*a*a*a*b", key));
  std::string slashes;
  for (int i = 0; i < 512; ++i) slashes += "a/";
  EXPECT_FALSE(GlobMatch("*a*a*a*/*a*a*b", slashes));  // a restart after every '/'
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(Glob, ValidateRejectsBadPatterns) {
  const char* bad[] = {"[a", "a[", "[!", "[]", "[a-", "{a,b", "a}", "{a,{b}}", "a\\", "[z-a]"};
  for (const char* p : bad) {
    Status s = ValidateGlob(p);
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << p;
    EXPECT_NE(s.message().find(p), std::string::npos) << s.message();
    EXPECT_EQ(s.message().find('\n'), std::string::npos);
    EXPECT_FALSE(GlobMatch(p, p)) << p;
  }
  EXPECT_NE(ValidateGlob("[a").message().find("unclosed '['"), std::string::npos);
  EXPECT_NE(ValidateGlob("/{a").message().find("unclosed '{'"), std::string::npos);
  const char* good[] = {"*.jpg", "/a/**", "{a,b}", "{}", "[]a]", "\\[", "x,y", "", "/", "[a-]"};
  for (const char* p : good) EXPECT_TRUE(ValidateGlob(p).ok()) << p;
}

TEST(Filter, EmptySpec) {
  FilterSpec f;
  EXPECT_TRUE(f.empty());
  EXPECT_TRUE(Admit(f, "any/key", 0, 0));
  f.min_size = 0;
  EXPECT_FALSE(f.empty());
  FilterSpec g;
  g.exclude = {"*.tmp"};
  EXPECT_FALSE(g.empty());
}

TEST(Filter, AdmitTable) {
  FilterSpec f;
  f.include = {"*.jpg", "/docs/**"};
  f.exclude = {"**/thumbs/**", "*.tmp"};
  f.min_size = 10;
  f.max_size = 100;
  f.newer_than_ms = 1000;
  f.older_than_ms = 2000;
  struct Case {
    const char* key;
    uint64_t size;
    int64_t mtime;
    bool admit;
  } cases[] = {
      {"a/b.jpg", 50, 1500, true},           {"docs/readme.md", 50, 1500, true},
      {"x/docs/readme.md", 50, 1500, false},                               // /docs is anchored
      {"a/b.png", 50, 1500, false},                                        // not included
      {"a/thumbs/b.jpg", 50, 1500, false},                                 // exclude wins
      {"docs/x.tmp", 50, 1500, false},       {"a/b.jpg", 10, 1500, true},  // sizes are inclusive
      {"a/b.jpg", 100, 1500, true},          {"a/b.jpg", 9, 1500, false},
      {"a/b.jpg", 101, 1500, false},         {"a/b.jpg", 50, 1000, false},  // times are strict
      {"a/b.jpg", 50, 1001, true},           {"a/b.jpg", 50, 1999, true},
      {"a/b.jpg", 50, 2000, false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Admit(f, c.key, c.size, c.mtime), c.admit)
        << c.key << " " << c.size << " " << c.mtime;
  }
}

TEST(Filter, ExcludeOnly) {
  FilterSpec f;
  f.exclude = {"*.tmp"};
  EXPECT_TRUE(Admit(f, "a/b", 1, 1));
  EXPECT_FALSE(Admit(f, "a/b.tmp", 1, 1));
}

TEST(TimeSpec, AbsoluteTimes) {
  const int64_t now = 1'800'000'000'000;
  struct Case {
    const char* text;
    int64_t ms;
  } cases[] = {
      {"2024-05-01", 1714521600000},
      {"2024-05-01T12:30:00Z", 1714566600000},
      {"2024-05-01t12:30:00z", 1714566600000},
      {"2024-05-01T12:30:00+02:00", 1714559400000},
      {"2024-05-01T12:30:00-01:30", 1714572000000},
      {"2024-05-01T12:30:00-0130", 1714572000000},
      {"2024-05-01 12:30:00.250", 1714566600250},
      {"2024-05-01T12:30:00.25Z", 1714566600250},
      {"2024-05-01T12:30:00.123456789Z", 1714566600123},
      {"2024-05-01T12:30", 1714566600000},
      {"2024-02-29", 1709164800000},
      {"2000-03-01", 951868800000},
      {"1970-01-01", 0},
      {"1969-12-31T23:59:59Z", -1000},
  };
  for (const auto& c : cases) {
    auto r = ParseTimeSpec(c.text, now);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.status().ToString();
    EXPECT_EQ(*r, c.ms) << c.text;
  }
}

TEST(TimeSpec, DurationsBeforeNow) {
  const int64_t now = 1'800'000'000'000;
  struct Case {
    const char* text;
    int64_t ago_ms;
  } cases[] = {
      {"90s", 90'000},       {"15m", 900'000},      {"12h", 43'200'000},    {"7d", 604'800'000},
      {"2w", 1'209'600'000}, {"1.5h", 5'400'000},   {"1h30m", 5'400'000},   {"0", 0},
      {"500ms", 500},        {"1M", 2'592'000'000}, {"1y", 31'536'000'000},
  };
  for (const auto& c : cases) {
    auto r = ParseTimeSpec(c.text, now);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.status().ToString();
    EXPECT_EQ(*r, now - c.ago_ms) << c.text;
  }
}

TEST(TimeSpec, RejectsBadInput) {
  const char* bad[] = {"",
                       "7",
                       "-5m",
                       "7 d",
                       "7x",
                       "abc",
                       "1.2.3s",
                       "d",
                       "2023-02-29",
                       "2024-13-01",
                       "2024-00-10",
                       "2024-05-32",
                       "2024-5-1",
                       "2024-05-01X",
                       "2024-05-01T",
                       "2024-05-01T25:00:00Z",
                       "2024-05-01T12:60",
                       "2024-05-01T12:30:61Z",
                       "2024-05-01T12:30:00.Z",
                       "2024-05-01T12:30:00+2",
                       "2024-05-01T12:30:00+02:00x",
                       "2024-05-01T12:30:00ZZ",
                       "2024-05-01T12:30:00 UTC",
                       "2024-05-01Z"};
  for (const char* text : bad) {
    auto r = ParseTimeSpec(text, 0);
    ASSERT_FALSE(r.ok()) << "\"" << text << "\" gave " << *r;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("\"" + std::string(text) + "\""), std::string::npos)
        << r.status().message();
  }
}

TEST(Duration, GoodInputs) {
  struct Case {
    const char* text;
    int64_t ms;
  } cases[] = {
      {"500ms", 500},       {"30s", 30'000},       {"5m", 300'000}, {"1h", 3'600'000},
      {"1d", 86'400'000},   {"1.5s", 1500},        {"0", 0},        {"0s", 0},
      {"1h30m", 5'400'000}, {"2w", 1'209'600'000}, {".5s", 500},    {"1m30s500ms", 90'500},
  };
  for (const auto& c : cases) {
    auto r = ParseDurationMs(c.text);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.status().ToString();
    EXPECT_EQ(*r, c.ms) << c.text;
  }
}

TEST(Duration, BadInputs) {
  const char* bad[] = {
      "", "5", "5sec", "ms", "-1s", "1e3s", "1 s", "s5", "1.s.", "99999999999999y", "5S"};
  for (const char* text : bad) {
    auto r = ParseDurationMs(text);
    ASSERT_FALSE(r.ok()) << "\"" << text << "\" gave " << *r;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("\"" + std::string(text) + "\""), std::string::npos);
    EXPECT_NE(r.status().message().find("duration"), std::string::npos);
  }
  EXPECT_NE(ParseDurationMs("5").status().message().find("missing unit"), std::string::npos);
}

}  // namespace
}  // namespace ferry::migrate
