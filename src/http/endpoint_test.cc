#include "http/endpoint.h"

#include <gtest/gtest.h>

namespace ferry::http {
namespace {

TEST(Endpoint, ParsesAndRejects) {
  auto a = ParseEndpoint("http://127.0.0.1:9000");
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->tls);
  EXPECT_EQ(a->port, 9000);
  EXPECT_EQ(a->HostHeader(), "127.0.0.1:9000");
  auto b = ParseEndpoint("https://s3.amazonaws.com/");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->port, 443);
  EXPECT_EQ(b->HostHeader(), "s3.amazonaws.com");
  auto c = ParseEndpoint("http://[::1]:8080");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->host, "::1");
  EXPECT_EQ(c->HostHeader(), "[::1]:8080");
  for (const char* bad : {"ftp://x", "http://", "http://:80", "http://h:0", "http://h:99999",
                          "http://u:p@h", "h:80", "http://h:8x"}) {
    EXPECT_FALSE(ParseEndpoint(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace ferry::http
