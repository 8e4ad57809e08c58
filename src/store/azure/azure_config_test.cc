#include "store/azure/azure_config.h"

#include <gtest/gtest.h>

#include <map>

namespace ferry::azure {
namespace {

constexpr char kKey[] = "c2VjcmV0LWtleS1ieXRlcw==";  // base64("secret-key-bytes")

s3::EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(AzureConfig, ConnectionStrings) {
  struct Case {
    std::string text;
    std::string account, key, sas, endpoint;
  } cases[] = {
      {"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + std::string(kKey) +
           ";EndpointSuffix=core.windows.net",
       "acct", kKey, "", "https://acct.blob.core.windows.net"},
      {"AccountName=acct;AccountKey=" + std::string(kKey), "acct", kKey, "",
       "https://acct.blob.core.windows.net"},
      {"accountname=acct;accountkey=" + std::string(kKey) +
           ";DefaultEndpointsProtocol=http;EndpointSuffix=core.chinacloudapi.cn;",
       "acct", kKey, "", "http://acct.blob.core.chinacloudapi.cn"},
      {"AccountName=devstoreaccount1;AccountKey=" + std::string(kKey) +
           ";BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;QueueEndpoint=http://x",
       "devstoreaccount1", kKey, "", "http://127.0.0.1:10000/devstoreaccount1"},
      {"UseDevelopmentStorage=true", kDevAccount, kDevAccountKey, "", kDevBlobEndpoint},
      {"UseDevelopmentStorage=true;BlobEndpoint=http://127.0.0.1:4321/devstoreaccount1",
       kDevAccount, kDevAccountKey, "", "http://127.0.0.1:4321/devstoreaccount1"},
      {"BlobEndpoint=https://acct.blob.core.windows.net;SharedAccessSignature=sv=2021&sig=a%2Bb=",
       "", "", "sv=2021&sig=a%2Bb=", "https://acct.blob.core.windows.net"},
      {"AccountName=acct;SharedAccessSignature=?sv=1&sig=x", "acct", "", "sv=1&sig=x",
       "https://acct.blob.core.windows.net"},
  };
  for (const Case& c : cases) {
    auto r = ParseConnectionString(c.text);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.status().ToString();
    EXPECT_EQ(r->account, c.account) << c.text;
    EXPECT_EQ(r->key, c.key) << c.text;
    EXPECT_EQ(r->sas, c.sas) << c.text;
    EXPECT_EQ(r->endpoint_url, c.endpoint) << c.text;
  }
}

TEST(AzureConfig, BadConnectionStringsGiveOneLineWithoutTheSecret) {
  const std::string secret = "not*base64*secret";
  struct Case {
    std::string text;
    std::string contains;
  } cases[] = {
      {"AccountName=acct;AccountKey=" + secret, "the account key is not valid base64"},
      {"AccountName=acct", "neither AccountKey nor SharedAccessSignature"},
      {"AccountKey=" + std::string(kKey), "AccountKey needs AccountName"},
      {"SharedAccessSignature=sig=" + secret, "needs AccountName or BlobEndpoint"},
      {"AccountName=acct;AccountKey=" + std::string(kKey) + ";DefaultEndpointsProtocol=ftp",
       "DefaultEndpointsProtocol must be http or https"},
      {"AccountName=acct;AccountKey=" + std::string(kKey) + ";BlobEndpoint=ftp://h",
       "BlobEndpoint"},
      {"AccountName=acct;" + secret, "malformed"},
      {"=" + secret, "malformed"},
  };
  for (const Case& c : cases) {
    auto r = ParseConnectionString(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    const std::string& m = r.status().message();
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << m;
    EXPECT_NE(m.find(c.contains), std::string::npos) << m;
    EXPECT_NE(m.find("AZURE_STORAGE_CONNECTION_STRING"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_EQ(m.find(secret), std::string::npos) << m;
    EXPECT_EQ(m.find(kKey), std::string::npos) << m;
  }
}

TEST(AzureConfig, EnvironmentPrecedence) {
  std::string conn = "AccountName=conn;AccountKey=" + std::string(kKey);
  // The connection string wins over the other variables.
  auto a = ResolveAzureConfig("conn", Env({{"AZURE_STORAGE_CONNECTION_STRING", conn},
                                           {"AZURE_STORAGE_ACCOUNT", "other"},
                                           {"AZURE_STORAGE_KEY", kKey}}));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->account, "conn");
  EXPECT_EQ(a->source, "AZURE_STORAGE_CONNECTION_STRING");
  // Account and key.
  auto b = ResolveAzureConfig("acct", Env({{"AZURE_STORAGE_ACCOUNT", "acct"},
                                           {"AZURE_STORAGE_KEY", kKey}}));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->key, kKey);
  EXPECT_EQ(b->endpoint_url, "https://acct.blob.core.windows.net");
  // A SAS wins over a key; the account may come from the location.
  auto c = ResolveAzureConfig("acct", Env({{"AZURE_STORAGE_KEY", kKey},
                                           {"AZURE_STORAGE_SAS_TOKEN", "?sv=1&sig=s"}}));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->account, "acct");
  EXPECT_EQ(c->key, "");
  EXPECT_EQ(c->sas, "sv=1&sig=s");
}

TEST(AzureConfig, EnvironmentErrors) {
  auto none = ResolveAzureConfig("acct", Env({}));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), ErrorCode::kAccessDenied);
  EXPECT_NE(none.status().message().find("no Azure credentials"), std::string::npos);

  auto other = ResolveAzureConfig(
      "acct", Env({{"AZURE_STORAGE_CONNECTION_STRING",
                    "AccountName=someone;AccountKey=" + std::string(kKey)}}));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(other.status().message().find("are for account someone, not acct"), std::string::npos)
      << other.status().message();
  EXPECT_EQ(other.status().message().find(kKey), std::string::npos);

  auto bad_key = ResolveAzureConfig("acct", Env({{"AZURE_STORAGE_KEY", "%%%"}}));
  ASSERT_FALSE(bad_key.ok());
  EXPECT_EQ(bad_key.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad_key.status().message(), "AZURE_STORAGE_KEY: the account key is not valid base64");
}

}  // namespace
}  // namespace ferry::azure
