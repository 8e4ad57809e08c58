#include "store/s3/addressing.h"

#include <gtest/gtest.h>

namespace ferry::s3 {
namespace {

TEST(Addressing, Table) {
  struct Case {
    const char* bucket;
    const char* endpoint;
    const char* region;
    const char* host_header;
    bool tls;
    bool path_style;
    const char* key;
    const char* path;
  } cases[] = {
      {"logs", "", "eu-west-1", "logs.s3.eu-west-1.amazonaws.com", true, false, "a b/c", "/a b/c"},
      {"logs", "", "eu-west-1", "logs.s3.eu-west-1.amazonaws.com", true, false, "", "/"},
      {"my.dotted", "", "us-east-1", "s3.us-east-1.amazonaws.com", true, true, "k", "/my.dotted/k"},
      {"bkt", "http://127.0.0.1:9000", "us-east-1", "127.0.0.1:9000", false, true, "k/", "/bkt/k/"},
      {"bkt", "http://127.0.0.1:9000/", "us-east-1", "127.0.0.1:9000", false, true, "", "/bkt"},
      {"bkt", "https://r2.example.com", "auto", "r2.example.com", true, true, "//x", "/bkt///x"},
  };
  for (const auto& c : cases) {
    auto a = ResolveAddressing(c.bucket, c.endpoint, c.region);
    ASSERT_TRUE(a.ok()) << c.endpoint;
    EXPECT_EQ(a->endpoint.HostHeader(), c.host_header);
    EXPECT_EQ(a->endpoint.tls, c.tls);
    EXPECT_EQ(a->path_style, c.path_style);
    EXPECT_EQ(a->PathFor(c.bucket, c.key), c.path);
  }
  EXPECT_FALSE(ResolveAddressing("bkt", "http://127.0.0.1:9000/base", "r").ok());
  EXPECT_FALSE(ResolveAddressing("", "", "r").ok());
}

}  // namespace
}  // namespace ferry::s3
