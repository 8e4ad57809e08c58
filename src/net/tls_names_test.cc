#include "net/tls_names.h"

#include <gtest/gtest.h>

namespace ferry::net {
namespace {

TEST(HostNameMatches, ExactWildcardAndRefused) {
  struct Case {
    const char* pattern;
    const char* host;
    bool match;
  };
  const Case cases[] = {
      {"a.example.com", "a.example.com", true},
      {"A.Example.COM", "a.example.com", true},
      {"a.example.com.", "a.example.com", true},
      {"a.example.com", "a.example.com.", true},
      {"a.example.com", "b.example.com", false},
      {"a.example.com", "example.com", false},
      {"*.example.com", "a.example.com", true},
      {"*.example.com", "A.EXAMPLE.com", true},
      {"*.example.com", "example.com", false},
      {"*.example.com", "a.b.example.com", false},
      {"*.example.com", ".example.com", false},
      {"*.com", "example.com", false},  // too wide
      {"f*.example.com", "foo.example.com", false},
      {"*.*.example.com", "a.b.example.com", false},
      {"a.*.example.com", "a.b.example.com", false},
      {"", "a", false},
      {"a", "", false},
      {"localhost", "localhost", true},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(HostNameMatches(c.pattern, c.host), c.match) << c.pattern << " vs " << c.host;
  }
}

TEST(PickCertificate, ExactBeforeWildcardFirstAsDefault) {
  const std::vector<std::vector<std::string>> names = {
      {"default.test"},
      {"*.example.com", "example.com"},
      {"www.example.com"},
      {"other.test", "alt.test"},
  };
  EXPECT_EQ(PickCertificate(names, ""), 0u);              // no SNI
  EXPECT_EQ(PickCertificate(names, "unknown.test"), 0u);  // nothing matches
  EXPECT_EQ(PickCertificate(names, "default.test"), 0u);
  EXPECT_EQ(PickCertificate(names, "example.com"), 1u);
  EXPECT_EQ(PickCertificate(names, "img.example.com"), 1u);
  EXPECT_EQ(PickCertificate(names, "www.example.com"), 2u);  // exact beats the earlier wildcard
  EXPECT_EQ(PickCertificate(names, "ALT.test"), 3u);
}

TEST(Alpn, WireForm) {
  EXPECT_EQ(AlpnWire({"h2", "http/1.1"}), std::string("\x02h2\x08http/1.1"));
  EXPECT_EQ(AlpnWire({}), "");
}

TEST(Alpn, ServerPreferenceAmongOffered) {
  const std::vector<std::string> ours = {"h2", "http/1.1"};
  EXPECT_EQ(SelectAlpn(AlpnWire({"http/1.1", "h2"}), ours), "h2");
  EXPECT_EQ(SelectAlpn(AlpnWire({"http/1.1"}), ours), "http/1.1");
  EXPECT_EQ(SelectAlpn(AlpnWire({"h3", "spdy/3"}), ours), std::nullopt);
  EXPECT_EQ(SelectAlpn("", ours), std::nullopt);
  EXPECT_EQ(SelectAlpn(AlpnWire({"h2"}), {"http/1.1"}), std::nullopt);
  // A prefix of a name is not the name.
  EXPECT_EQ(SelectAlpn(AlpnWire({"h2c"}), ours), std::nullopt);
}

TEST(Alpn, MalformedOffersSelectNothing) {
  const std::vector<std::string> ours = {"h2", "http/1.1"};
  EXPECT_EQ(SelectAlpn(std::string("\x05h2"), ours), std::nullopt);         // runs past the end
  EXPECT_EQ(SelectAlpn(std::string("\x02h2\x00", 4), ours), std::nullopt);  // a zero length
  EXPECT_EQ(SelectAlpn(std::string("\x02h2\x09http/1.1", 12), ours), std::nullopt);
}

}  // namespace
}  // namespace ferry::net
