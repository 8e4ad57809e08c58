#include "cache/negotiation.h"

#include <gtest/gtest.h>

namespace ferry::cache {
namespace {

using namespace std::chrono;

TEST(NegotiationTest, AcceptEncoding) {
  struct Case {
    const char* header;
    bool zstd;
  } cases[] = {
      {"zstd", true},
      {"gzip, deflate, br, zstd", true},
      {"ZSTD;q=0.1", true},
      {"zstd;q=0", false},
      {"zstd; q=0.000", false},
      {"*", true},
      {"gzip, *;q=0.5", true},
      {"*;q=0", false},
      {"*, zstd;q=0", false},  // named beats the wildcard
      {"gzip, br", false},
      {"", false},
      {"identity", false},
      {"zstd;q=2", false},  // malformed q: not an acceptance
      {"zstd;q=abc", false},
      {"zstdx", false},
      {"zstd;q", false},
      {"zstd;q ", false},
      {"zstd; level=3", true},
  };
  for (const Case& c : cases) EXPECT_EQ(AcceptsCoding(c.header, "zstd"), c.zstd) << c.header;
}

TEST(NegotiationTest, ZstdEtagIsADistinctVariant) {
  EXPECT_EQ(ZstdEtag("\"abc\""), "\"abc-zstd\"");
  EXPECT_EQ(ZstdEtag("W/\"abc\""), "W/\"abc-zstd\"");
  EXPECT_EQ(ZstdEtag(""), "");
  EXPECT_EQ(ZstdEtag("abc"), "") << "not an entity-tag";
  EXPECT_FALSE(WeakEtagMatch(ZstdEtag("\"abc\""), "\"abc\""));
}

TEST(NegotiationTest, ConditionalRequests) {
  sys_seconds lm = sys_days(2026y / December / 1) + 10h;
  const char* at_lm = "Tue, 01 Dec 2026 10:00:00 GMT";
  const char* before = "Tue, 01 Dec 2026 09:59:59 GMT";
  EXPECT_TRUE(NotModified("\"v1\"", "", "\"v1\"", lm));
  EXPECT_TRUE(NotModified("W/\"v1\"", "", "\"v1\"", lm)) << "weak comparison";
  EXPECT_TRUE(NotModified("\"v0\", \"v1\"", "", "\"v1\"", lm));
  EXPECT_TRUE(NotModified("*", "", "\"v1\"", lm));
  EXPECT_FALSE(NotModified("\"v2\"", at_lm, "\"v1\"", lm)) << "If-None-Match decides alone";
  EXPECT_FALSE(NotModified("\"v1\"", "", "", lm));
  EXPECT_TRUE(NotModified("", at_lm, "\"v1\"", lm));
  EXPECT_FALSE(NotModified("", before, "\"v1\"", lm));
  EXPECT_FALSE(NotModified("", "yesterday", "\"v1\"", lm)) << "invalid date ignored";
  EXPECT_FALSE(NotModified("", at_lm, "\"v1\"", std::nullopt));
  EXPECT_FALSE(NotModified("", "", "\"v1\"", lm));
  EXPECT_TRUE(NotModified(ZstdEtag("\"v1\""), "", ZstdEtag("\"v1\""), lm));
}

}  // namespace
}  // namespace ferry::cache
