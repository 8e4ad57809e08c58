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

namespace ferry::cache {
namespace {

TEST(ChooseCodingTest, TheHighestQThenTheCheapestAndSmallest) {
  struct Case {
    const char* accept;
    bool zstd_stored, transcodable;
    Coding want;
  };
  const Case cases[] = {
      {"", true, true, Coding::kIdentity},
      {"gzip, deflate, br, zstd", true, true, Coding::kZstd},  // Chromium over https / localhost
      {"gzip, deflate", true, true, Coding::kGzip},            // Chromium over plain http to a name
      {"gzip, deflate, br", true, true, Coding::kBr},          // Firefox
      {"br;q=1, zstd;q=0.5", true, true, Coding::kBr},
      {"zstd;q=0, br;q=0, gzip", true, true, Coding::kGzip},
      {"zstd;q=0, br;q=0, gzip;q=0", true, true, Coding::kIdentity},
      {"*", true, true, Coding::kZstd},
      {"*;q=0.5, gzip", true, true, Coding::kGzip},
      {"*, zstd;q=0", true, true, Coding::kBr},
      {"gzip, identity;q=0", true, true, Coding::kGzip},
      {"identity, gzip;q=0.5", true, true, Coding::kIdentity},
      {"identity;q=0", true, true, Coding::kIdentity},  // nothing else: identity all the same
      {"GZIP ; Q=0.8", true, true, Coding::kGzip},
      {"gzip;q=2", true, true, Coding::kIdentity},   // a malformed q is no acceptance
      {"gzip, br", true, false, Coding::kIdentity},  // not made for this object
      {"gzip, zstd", false, false, Coding::kIdentity},  // stored as identity (binary, small)
      {"zstd", true, false, Coding::kZstd},
  };
  EXPECT_EQ(ChooseCoding("gzip, br", {true, false, true}), Coding::kGzip) << "br turned off";
  for (const Case& c : cases) {
    EXPECT_EQ(ChooseCoding(c.accept, {c.zstd_stored, c.transcodable, c.transcodable}), c.want)
        << "'" << c.accept << "'";
  }
}

TEST(ChooseCodingTest, EachCodingHasItsOwnEtag) {
  EXPECT_EQ(CodingEtag("\"v1\"", Coding::kBr), "\"v1-br\"");
  EXPECT_EQ(CodingEtag("W/\"v1\"", Coding::kGzip), "W/\"v1-gzip\"");
  EXPECT_EQ(CodingEtag("\"v1\"", Coding::kIdentity), "\"v1\"");
  EXPECT_EQ(CodingEtag("", Coding::kGzip), "");
  EXPECT_EQ(CodingEtag("v1", Coding::kGzip), "");  // not an entity-tag
  EXPECT_FALSE(WeakEtagMatch(CodingEtag("\"v1\"", Coding::kGzip), CodingEtag("\"v1\"", Coding::kBr)));
}

}  // namespace
}  // namespace ferry::cache
