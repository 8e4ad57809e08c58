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
      {"gs://b/k", "unknown scheme \"gs\""},
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

}  // namespace
}  // namespace ferry
