#include "store/gcs/gcs_config.h"

#include <gtest/gtest.h>

#include <map>

namespace ferry::gcs {
namespace {

s3::EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(GcsConfig, HmacKeyRegionAutoAndEndpoint) {
  auto c = ResolveGcsConfig(Env({{"GS_ACCESS_KEY_ID", "GOOG1E"}, {"GS_SECRET_ACCESS_KEY", "s"}}));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->credentials.access_key_id, "GOOG1E");
  EXPECT_EQ(c->region, "auto");
  EXPECT_EQ(c->endpoint_url, "https://storage.googleapis.com");
  auto t = ResolveGcsConfig(Env({{"GS_ACCESS_KEY_ID", "k"},
                                 {"GS_SECRET_ACCESS_KEY", "s"},
                                 {"GS_ENDPOINT_URL", "http://127.0.0.1:9000"}}));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->endpoint_url, "http://127.0.0.1:9000");
}

TEST(GcsConfig, AwsKeysAreNeverUsed) {
  auto c = ResolveGcsConfig(Env({{"AWS_ACCESS_KEY_ID", "AKID"}, {"AWS_SECRET_ACCESS_KEY", "s"}}));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), ErrorCode::kAccessDenied);
  EXPECT_NE(c.status().message().find("GS_ACCESS_KEY_ID"), std::string::npos);
}

}  // namespace
}  // namespace ferry::gcs
