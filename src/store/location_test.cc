#include "store/location.h"

#include <gtest/gtest.h>

namespace ferry {
namespace {

TEST(Location, ParsesS3AndLocalForms) {
  auto a = ParseLocation("s3://my-bucket/photos/a b.jpg");
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->is_s3());
  EXPECT_EQ(a->bucket, "my-bucket");
  EXPECT_EQ(a->key, "photos/a b.jpg");
  EXPECT_FALSE(a->ends_with_slash());

  auto b = ParseLocation("s3://my-bucket");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->key, "");
  EXPECT_TRUE(b->ends_with_slash());

  auto c = ParseLocation("file:///var/data/");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->is_s3());
  EXPECT_EQ(c->path, "/var/data/");

  auto d = ParseLocation("./rel/dir");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->path, "./rel/dir");
}

TEST(Location, RejectsBadInputWithOneLineReasons) {
  struct Case {
    const char* arg;
    const char* contains;
  } cases[] = {
      {"", "empty location"},
      {"s3://", "missing bucket"},
      {"s3:///key", "missing bucket"},
      {"s3://a/k", "invalid bucket name"},
      {"s3://Bad..name/k", "invalid bucket name"},
      {"ftp://host/x", "unknown scheme \"ftp\""},
      {"gcs://b/k", "unknown scheme \"gcs\""},
      {"gs://", "missing bucket"},
      {"azure://", "missing account"},
      {"azure://acct", "missing container"},
      {"azure://acct/", "missing container"},
      {"azure://Acct/c1c/k", "invalid account name"},
      {"azure://acct/Bad_Container/k", "invalid container name"},
      {"azure://acct/a--b/k", "invalid container name"},
      {"file://host/x", "file:///absolute"},
  };
  for (const auto& c : cases) {
    auto r = ParseLocation(c.arg);
    ASSERT_FALSE(r.ok()) << c.arg;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.contains), std::string::npos) << r.status().message();
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
  }
}

TEST(Location, ParsesGcsAndAzure) {
  auto g = ParseLocation("gs://my-bucket/dir/");
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE(g->is_gcs());
  EXPECT_TRUE(g->is_remote());
  EXPECT_FALSE(g->is_s3());
  EXPECT_EQ(g->bucket, "my-bucket");
  EXPECT_EQ(g->key, "dir/");
  EXPECT_EQ(g->Root(), "gs://my-bucket");
  EXPECT_EQ(g->Child("a b"), "gs://my-bucket/dir/a b");

  auto a = ParseLocation("azure://devstoreaccount1/photos/2024/a.jpg");
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->is_azure());
  EXPECT_TRUE(a->is_remote());
  EXPECT_EQ(a->account, "devstoreaccount1");
  EXPECT_EQ(a->bucket, "photos");
  EXPECT_EQ(a->key, "2024/a.jpg");
  EXPECT_FALSE(a->ends_with_slash());
  EXPECT_EQ(a->Root(), "azure://devstoreaccount1/photos");

  auto c = ParseLocation("azure://acct/container");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->key, "");
  EXPECT_TRUE(c->ends_with_slash());
  EXPECT_EQ(c->Child("k"), "azure://acct/container/k");

  auto local = ParseLocation("dir");
  ASSERT_TRUE(local.ok());
  EXPECT_FALSE(local->is_remote());
}

TEST(Location, AzureNameRules) {
  EXPECT_TRUE(IsValidAzureAccount("abc"));
  EXPECT_TRUE(IsValidAzureAccount("devstoreaccount1"));
  EXPECT_FALSE(IsValidAzureAccount("ab"));
  EXPECT_FALSE(IsValidAzureAccount("a-b-c"));
  EXPECT_FALSE(IsValidAzureAccount(std::string(25, 'a')));
  EXPECT_TRUE(IsValidAzureContainer("my-container-1"));
  EXPECT_TRUE(IsValidAzureContainer("$root"));
  EXPECT_FALSE(IsValidAzureContainer("-abc"));
  EXPECT_FALSE(IsValidAzureContainer("abc-"));
  EXPECT_FALSE(IsValidAzureContainer("ab"));
  EXPECT_FALSE(IsValidAzureContainer("a.bc"));
  EXPECT_FALSE(IsValidAzureContainer(std::string(64, 'a')));
}

}  // namespace
}  // namespace ferry
