#include "s3/config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>

namespace ferry::s3 {
namespace {

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars](const std::string& k) -> std::optional<std::string> {
    auto it = vars.find(k);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/ferry-config-" + std::to_string(::getpid());
    std::system(("mkdir -p " + dir_).c_str());
    Write(dir_ + "/credentials",
          "[default]\naws_access_key_id = DEFKEY\naws_secret_access_key = defsecret\n"
          "[work]\naws_access_key_id=WORKKEY\naws_secret_access_key=worksecret\n"
          "aws_session_token = worktoken\n");
    Write(dir_ + "/config",
          "[default]\nregion = eu-west-1\n"
          "[profile work]\nregion=ap-south-1\ns3 =\n  endpoint_url = http://127.0.0.1:9000\n"
          "[profile onlyconfig]\naws_access_key_id = CFGKEY\naws_secret_access_key = cfgsecret\n"
          "endpoint_url = https://r2.example\n");
  }
  void Write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }
  std::map<std::string, std::string> Files() {
    return {{"AWS_SHARED_CREDENTIALS_FILE", dir_ + "/credentials"},
            {"AWS_CONFIG_FILE", dir_ + "/config"}};
  }
  std::string dir_;
};

TEST_F(ConfigTest, EnvironmentCredentialsWinOverDefaultProfile) {
  auto vars = Files();
  vars["AWS_ACCESS_KEY_ID"] = "ENVKEY";
  vars["AWS_SECRET_ACCESS_KEY"] = "envsecret";
  vars["AWS_SESSION_TOKEN"] = "envtoken";
  vars["AWS_REGION"] = "us-west-2";
  vars["AWS_ENDPOINT_URL"] = "http://127.0.0.1:1";
  auto c = ResolveS3Config("", FakeEnv(vars));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->credentials.access_key_id, "ENVKEY");
  EXPECT_EQ(c->credentials.session_token, "envtoken");
  EXPECT_EQ(c->region, "us-west-2");
  EXPECT_EQ(c->endpoint_url, "http://127.0.0.1:1");
}

TEST_F(ConfigTest, DefaultProfileFromSharedFiles) {
  auto c = ResolveS3Config("", FakeEnv(Files()));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->credentials.access_key_id, "DEFKEY");
  EXPECT_EQ(c->region, "eu-west-1");
  EXPECT_EQ(c->endpoint_url, "");
}

TEST_F(ConfigTest, ExplicitProfileBeatsEnvironmentAndReadsNestedEndpoint) {
  auto vars = Files();
  vars["AWS_ACCESS_KEY_ID"] = "ENVKEY";
  vars["AWS_SECRET_ACCESS_KEY"] = "envsecret";
  auto c = ResolveS3Config("work", FakeEnv(vars));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->credentials.access_key_id, "WORKKEY");
  EXPECT_EQ(c->credentials.session_token, "worktoken");
  EXPECT_EQ(c->region, "ap-south-1");
  EXPECT_EQ(c->endpoint_url, "http://127.0.0.1:9000");
}

TEST_F(ConfigTest, AwsProfileVariableAndConfigOnlyProfile) {
  auto vars = Files();
  vars["AWS_PROFILE"] = "onlyconfig";
  vars["AWS_ENDPOINT_URL_S3"] = "http://127.0.0.1:2";
  vars["AWS_ENDPOINT_URL"] = "http://127.0.0.1:3";
  auto c = ResolveS3Config("", FakeEnv(vars));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->credentials.access_key_id, "CFGKEY");
  EXPECT_EQ(c->endpoint_url, "http://127.0.0.1:2");  // the S3-specific variable wins
  EXPECT_EQ(c->region, "us-east-1");
}

TEST_F(ConfigTest, MissingCredentialsAndProfilesAreOneLineErrorsWithoutSecrets) {
  auto none = ResolveS3Config("", FakeEnv({{"AWS_SHARED_CREDENTIALS_FILE", "/nonexistent"},
                                           {"AWS_CONFIG_FILE", "/nonexistent"}}));
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no credentials"), std::string::npos);

  auto missing = ResolveS3Config("nosuch", FakeEnv(Files()));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("profile nosuch not found"), std::string::npos);

  auto vars = Files();
  vars["AWS_ACCESS_KEY_ID"] = "ONLYKEY";  // secret missing: not usable
  vars["AWS_PROFILE"] = "nosuchprofile";
  auto half = ResolveS3Config("", FakeEnv(vars));
  ASSERT_FALSE(half.ok());
  EXPECT_EQ(half.status().message().find("secret"), std::string::npos);
}

TEST(ParseIni, SectionsCommentsAndNestedBlocks) {
  IniFile ini = ParseIni(
      "# comment\n[a]\nk = v\n; other\n[profile b]\n s3 =\n   endpoint_url = x\nregion=r\n");
  EXPECT_EQ(ini["a"]["k"], "v");
  EXPECT_EQ(ini["profile b"]["s3.endpoint_url"], "x");
  EXPECT_EQ(ini["profile b"]["region"], "r");
}

}  // namespace
}  // namespace ferry::s3
