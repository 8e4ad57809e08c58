#include "net/listen_address.h"

#include <gtest/gtest.h>

namespace ferry::net {
namespace {

TEST(ListenAddress, AcceptedForms) {
  struct Case {
    const char* text;
    ListenAddress::Kind kind;
    const char* host;
    uint16_t port;
    const char* path;
    const char* shown;
  };
  const Case cases[] = {
      {"127.0.0.1:8080", ListenAddress::Kind::kTcp, "127.0.0.1", 8080, "", "127.0.0.1:8080"},
      {"127.0.0.1:0", ListenAddress::Kind::kTcp, "127.0.0.1", 0, "", "127.0.0.1:0"},
      {"[::1]:10809", ListenAddress::Kind::kTcp, "::1", 10809, "", "[::1]:10809"},
      {"localhost:80", ListenAddress::Kind::kTcp, "127.0.0.1", 80, "", "127.0.0.1:80"},
      {":9000", ListenAddress::Kind::kTcp, "0.0.0.0", 9000, "", "0.0.0.0:9000"},
      {"unix:/run/ferry/nbd.sock", ListenAddress::Kind::kUnix, "", 0, "/run/ferry/nbd.sock",
       "unix:/run/ferry/nbd.sock"},
      {"unix:rel.sock", ListenAddress::Kind::kUnix, "", 0, "rel.sock", "unix:rel.sock"},
  };
  for (const auto& c : cases) {
    auto a = ParseListenAddress(c.text);
    ASSERT_TRUE(a.ok()) << c.text << ": " << a.status().ToString();
    EXPECT_EQ(a->kind, c.kind) << c.text;
    EXPECT_EQ(a->host, c.host) << c.text;
    EXPECT_EQ(a->port, c.port) << c.text;
    EXPECT_EQ(a->path, c.path) << c.text;
    EXPECT_EQ(a->ToString(), c.shown) << c.text;
  }
}

TEST(ListenAddress, RefusedFormsSayWhyInOneLine) {
  const char* bad[] = {"",          "8080",           "127.0.0.1",      "127.0.0.1:",     "127.0.0.1:65536",
                       "1.2.3.4:x", "1.2.3.4:-1",     "example.com:80", "::1:80",         "[::1]80",
                       "[::1]",     "[1.2.3.4]:80",   "unix:",          "256.0.0.1:80",   "[::1]:99999"};
  for (const char* b : bad) {
    auto a = ParseListenAddress(b);
    EXPECT_FALSE(a.ok()) << b;
    if (a.ok()) continue;
    EXPECT_EQ(a.status().code(), ErrorCode::kInvalidArgument) << b;
    EXPECT_EQ(a.status().message().find('\n'), std::string::npos) << b;
    EXPECT_NE(a.status().message().find(std::string("'") + b + "'"), std::string::npos) << a.status().message();
  }
  EXPECT_FALSE(ParseListenAddress("unix:/" + std::string(200, 'a')).ok());
}

}  // namespace
}  // namespace ferry::net
