#include "store/s3/s3_headers.h"

#include <gtest/gtest.h>

namespace ferry::s3 {
namespace {

constexpr char kMd5Etag[] = "\"9e107d9d372bb6826bd81d3542a419d6\"";

http::Response Answer(http::Headers headers) {
  http::Response r;
  r.status = 200;
  r.headers = std::move(headers);
  return r;
}

TEST(S3Headers, SentOnlyWhenSet) {
  ObjectHeaders h;
  h.content_type = "text/plain";
  h.cache_control = "no-cache";
  h.expires = "Thu, 01 Dec 1994 16:00:00 GMT";
  h.user = {{"owner-id", "7"}};
  http::Headers out;
  AddObjectHeaders(h, &out);
  EXPECT_EQ(out, (http::Headers{{"Content-Type", "text/plain"},
                                {"Cache-Control", "no-cache"},
                                {"Expires", "Thu, 01 Dec 1994 16:00:00 GMT"},
                                {"x-amz-meta-owner-id", "7"}}));
  http::Headers none;
  AddObjectHeaders(ObjectHeaders{}, &none);
  EXPECT_TRUE(none.empty());
}

TEST(S3Headers, WhenTheEtagIsTheBodysMd5) {
  struct Case {
    http::Headers headers;
    bool md5;
  } cases[] = {
      {{{"ETag", kMd5Etag}}, true},
      {{{"ETag", kMd5Etag}, {"x-amz-server-side-encryption", "AES256"}}, true},  // SSE-S3
      {{{"ETag", kMd5Etag}, {"x-amz-server-side-encryption", "aws:kms"}}, false},
      {{{"ETag", kMd5Etag}, {"x-amz-server-side-encryption", "aws:kms:dsse"}}, false},
      {{{"ETag", kMd5Etag}, {"x-amz-server-side-encryption-customer-algorithm", "AES256"}}, false},
      {{{"ETag", kMd5Etag}, {"x-goog-component-count", "2"}}, false},
      {{{"ETag", "\"9e107d9d372bb6826bd81d3542a419d6-2\""}}, false},  // multipart
      {{}, false},
  };
  for (const Case& c : cases) {
    http::Response r = Answer(c.headers);
    EXPECT_EQ(EtagIsMd5(r), c.md5) << (c.headers.empty() ? "" : c.headers.back().second);
  }
}

TEST(S3Headers, InfoFromHeaders) {
  http::Response r = Answer({{"ETag", kMd5Etag},
                             {"Content-Length", "43"},
                             {"Content-Type", "text/plain"},
                             {"Expires", "0"},
                             {"X-Amz-Meta-Owner-Id", "7"},
                             {"x-goog-meta-from-gcs", "yes"},
                             {"x-goog-hash", "crc32c=AAAAAA==,md5=nhB9nTcrtoJr2B01QqQZ1g=="}});
  ObjectInfo info = InfoFromHeaders("k", r);
  EXPECT_EQ(info.key, "k");
  EXPECT_EQ(info.etag, "9e107d9d372bb6826bd81d3542a419d6");
  EXPECT_TRUE(info.etag_is_md5);
  EXPECT_EQ(info.size, 43u);
  EXPECT_EQ(info.headers.content_type, "text/plain");
  EXPECT_EQ(info.headers.expires, "0");
  EXPECT_EQ(info.headers.user,
            (std::map<std::string, std::string>{{"owner-id", "7"}, {"from-gcs", "yes"}}));
  EXPECT_EQ(info.md5_hex, "9e107d9d372bb6826bd81d3542a419d6");
}

TEST(S3Headers, FlexibleChecksums) {
  ObjectInfo none = InfoFromHeaders("k", Answer({{"ETag", kMd5Etag}}));
  EXPECT_FALSE(none.checksum);
  ObjectInfo full = InfoFromHeaders("k", Answer({{"x-amz-checksum-crc64nvme", "qUVKnSa6gxM="},
                                                 {"x-amz-checksum-type", "FULL_OBJECT"}}));
  ASSERT_TRUE(full.checksum);
  EXPECT_EQ(*full.checksum, (ObjectChecksum{ChecksumAlgorithm::kCrc64Nvme,
                                            "qUVKnSa6gxM=", ChecksumType::kFullObject}));
  ObjectInfo composite = InfoFromHeaders(
      "k", Answer({{"X-Amz-Checksum-Sha256", "Zhie15keHg/OBlOZxcoF/BXCgYZaeimRvdZnwUZqkaQ=-2"},
                   {"X-Amz-Checksum-Type", "COMPOSITE"}}));
  ASSERT_TRUE(composite.checksum);
  EXPECT_EQ(composite.checksum->algorithm, ChecksumAlgorithm::kSha256);
  EXPECT_EQ(composite.checksum->type, ChecksumType::kComposite);
  // Servers from before x-amz-checksum-type: a composite is known by "-N".
  ObjectInfo old = InfoFromHeaders("k", Answer({{"x-amz-checksum-crc32", "1Fu2mQ==-2"}}));
  ASSERT_TRUE(old.checksum);
  EXPECT_EQ(old.checksum->type, ChecksumType::kComposite);
}

TEST(S3Headers, GoogHashMd5) {
  struct Case {
    const char* hash;
    const char* md5_hex;
  } cases[] = {
      {"crc32c=AAAAAA==,md5=nhB9nTcrtoJr2B01QqQZ1g==", "9e107d9d372bb6826bd81d3542a419d6"},
      {"md5=nhB9nTcrtoJr2B01QqQZ1g==,crc32c=AAAAAA==", "9e107d9d372bb6826bd81d3542a419d6"},
      {"crc32c=AAAAAA==", ""},  // a composite object
      {"md5=AAAA", ""},         // not 16 bytes
      {"", ""},
  };
  for (const Case& c : cases) {
    http::Response r = Answer({{"x-goog-hash", c.hash}});
    EXPECT_EQ(InfoFromHeaders("k", r).md5_hex, c.md5_hex) << c.hash;
  }
}

}  // namespace
}  // namespace ferry::s3
