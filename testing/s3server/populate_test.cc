#include "populate.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "crypto/digest.h"
#include "dir_store.h"

namespace ferry::s3server {
namespace {

Result<PopulateSpec> Parse(const char* text) {
  return PopulateSpecFromJson(nlohmann::json::parse(text));
}

TEST(PopulateSpec, ParsesEveryField) {
  auto spec = Parse(R"({"bucket":"bkt","prefix":"p/","count":10,"seed":7,"dirs":4,
      "sizes":[{"weight":95,"min":1024,"max":32768},{"weight":5,"min":32768,"max":1048576}],
      "extra":[{"key":"big/0","size":2048}],"content_type":"text/plain"})");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->bucket, "bkt");
  EXPECT_EQ(spec->prefix, "p/");
  EXPECT_EQ(spec->count, 10u);
  EXPECT_EQ(spec->seed, 7u);
  EXPECT_EQ(spec->dirs, 4u);
  ASSERT_EQ(spec->sizes.size(), 2u);
  EXPECT_EQ(spec->sizes[1].weight, 5u);
  EXPECT_EQ(spec->sizes[1].max, 1048576u);
  ASSERT_EQ(spec->extra.size(), 1u);
  EXPECT_EQ(spec->extra[0].key, "big/0");
  EXPECT_EQ(spec->content_type, "text/plain");
}

TEST(PopulateSpec, DefaultsToEmptyObjects) {
  auto spec = Parse(R"({"bucket":"bkt","count":3})");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->dirs, 256u);
  EXPECT_EQ(PopulateSize(*spec, 0), 0u);
  EXPECT_EQ(spec->content_type, "application/octet-stream");
}

TEST(PopulateSpec, RejectsBadInput) {
  for (const char* bad : {
           R"([])",
           R"({"count":3})",
           R"({"bucket":"bkt","cuont":3})",
           R"({"bucket":"bkt","count":-1})",
           R"({"bucket":"bkt","count":"3"})",
           R"({"bucket":"bkt","count":1000000000})",
           R"({"bucket":"bkt","dirs":0})",
           R"({"bucket":"bkt","sizes":[]})",
           R"({"bucket":"bkt","sizes":[{"weight":0,"min":0,"max":1}]})",
           R"({"bucket":"bkt","sizes":[{"weight":1,"min":2,"max":1}]})",
           R"({"bucket":"bkt","sizes":[{"weight":1,"min":0,"max":1,"avg":1}]})",
           R"({"bucket":"bkt","sizes":[{"weight":1,"min":0,"max":99999999999}]})",
           R"({"bucket":"bkt","extra":[{"size":1}]})",
           R"({"bucket":"bkt","extra":[{"key":"","size":1}]})",
       }) {
    EXPECT_FALSE(Parse(bad).ok()) << bad;
  }
}

TEST(PopulateKey, SpreadsOverDirectoriesAndWidens) {
  PopulateSpec spec;
  spec.prefix = "p/";
  spec.count = 75000;
  spec.dirs = 300;
  EXPECT_EQ(PopulateKey(spec, 12345), "p/d045/o00012345");
  EXPECT_EQ(PopulateKey(spec, 0), "p/d000/o00000000");
  spec.count = 200'000'000;
  spec.dirs = 5000;
  EXPECT_EQ(PopulateKey(spec, 12345), "p/d2345/o000012345");
}

TEST(PopulateSize, DrawsFromWeightedRanges) {
  PopulateSpec spec;
  spec.seed = 42;
  spec.sizes = {{95, 1024, 32768}, {5, 32769, 1048576}};
  int large = 0;
  for (uint64_t i = 0; i < 20000; ++i) {
    uint64_t s = PopulateSize(spec, i);
    ASSERT_GE(s, 1024u);
    ASSERT_LE(s, 1048576u);
    if (s > 32768) ++large;
    EXPECT_EQ(s, PopulateSize(spec, i));  // deterministic
  }
  EXPECT_GT(large, 800);   // about 5% of 20000 = 1000
  EXPECT_LT(large, 1200);
  PopulateSpec other = spec;
  other.seed = 43;
  int same = 0;
  for (uint64_t i = 0; i < 100; ++i) same += PopulateSize(spec, i) == PopulateSize(other, i);
  EXPECT_LT(same, 10);
}

class PopulateTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam()) {
      root_ = std::filesystem::temp_directory_path() /
              ("ferry-populate-test-" + std::to_string(::getpid()));
      std::filesystem::remove_all(root_);
      auto opened = OpenDirectoryStorage(root_);
      ASSERT_TRUE(opened.ok()) << opened.status().ToString();
      storage_ = std::move(opened).value();
    } else {
      storage_ = NewMemoryStorage();
    }
    ASSERT_TRUE(storage_->CreateBucket("bkt").ok());
  }
  void TearDown() override {
    storage_.reset();
    if (!root_.empty()) std::filesystem::remove_all(root_);
  }

  std::filesystem::path root_;
  std::unique_ptr<Storage> storage_;
};

TEST_P(PopulateTest, CreatesDeterministicObjectsWithRealEtags) {
  PopulateSpec spec;
  spec.bucket = "bkt";
  spec.prefix = "p/";
  spec.count = 50;
  spec.seed = 9;
  spec.dirs = 7;
  spec.sizes = {{3, 0, 0}, {5, 1, 100}, {2, 300000, 600000}};
  spec.extra = {{"big/0", 1000003}};
  auto r = Populate(*storage_, spec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->created, 51u);
  EXPECT_EQ(storage_->object_count(), 51u);

  uint64_t bytes = 0;
  std::set<std::string> bodies;
  for (uint64_t i = 0; i < spec.count; ++i) {
    auto obj = storage_->GetObject("bkt", PopulateKey(spec, i));
    ASSERT_TRUE(obj.ok()) << PopulateKey(spec, i);
    EXPECT_EQ(obj->size, PopulateSize(spec, i));
    auto body = ReadAll(*obj->blob);
    ASSERT_TRUE(body.ok());
    EXPECT_EQ(body->size(), obj->size);
    EXPECT_EQ(obj->etag, HexLower(Md5(*body)));
    EXPECT_EQ(obj->meta.content_type, "application/octet-stream");
    if (!body->empty()) bodies.insert(*body);
    bytes += obj->size;
  }
  auto big = storage_->GetObject("bkt", "big/0");
  ASSERT_TRUE(big.ok());
  auto big_body = ReadAll(*big->blob);
  ASSERT_TRUE(big_body.ok());
  EXPECT_EQ(big_body->size(), 1000003u);
  EXPECT_EQ(big->etag, HexLower(Md5(*big_body)));
  EXPECT_EQ(r->bytes, bytes + 1000003u);

  // Non-empty bodies differ from each other; the same spec gives the same bytes.
  size_t nonempty = 0;
  for (uint64_t i = 0; i < spec.count; ++i) nonempty += PopulateSize(spec, i) > 0;
  EXPECT_EQ(bodies.size(), nonempty);
  std::string etag0 = storage_->GetObject("bkt", PopulateKey(spec, 1))->etag;
  ASSERT_TRUE(Populate(*storage_, spec).ok());
  EXPECT_EQ(storage_->object_count(), 51u);
  EXPECT_EQ(storage_->GetObject("bkt", PopulateKey(spec, 1))->etag, etag0);

  // A delimiter listing sees one common prefix per directory.
  ListParams params;
  params.prefix = "p/";
  params.delimiter = "/";
  params.max_keys = 1000;
  auto listed = storage_->ListObjects("bkt", params);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->common_prefixes.size(), 7u);
}

TEST_P(PopulateTest, UnknownBucketIsNoSuchBucket) {
  PopulateSpec spec;
  spec.bucket = "nope";
  spec.count = 1;
  auto r = Populate(*storage_, spec);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().remote_code(), "NoSuchBucket");
}

INSTANTIATE_TEST_SUITE_P(Modes, PopulateTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Dir" : "Memory"; });

}  // namespace
}  // namespace ferry::s3server
