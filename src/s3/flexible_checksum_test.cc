#include "s3/flexible_checksum.h"

#include <gtest/gtest.h>

namespace ferry::s3 {
namespace {

constexpr std::string_view kBody = "The quick brown fox jumps over the lazy dog";

Result<std::optional<ObjectChecksum>> Check(const KeyValues& headers, std::string_view body,
                                            const KeyValues& trailers = {}) {
  auto check = ChecksumCheck::FromHeaders(headers);
  if (!check.ok()) return check.status();
  check->Update(body.substr(0, 10));
  check->Update(body.substr(10));
  return check->Finish(trailers);
}

TEST(FlexibleChecksumTest, HeaderValueIsVerifiedForEveryAlgorithm) {
  for (ChecksumAlgorithm a : kChecksumAlgorithms) {
    std::string name(ChecksumHeaderName(a));
    auto ok = Check({{name, ChecksumBase64(a, kBody)}}, kBody);
    ASSERT_TRUE(ok.ok()) << name << ": " << ok.status().ToString();
    ASSERT_TRUE(ok->has_value());
    EXPECT_EQ((*ok)->algorithm, a);
    EXPECT_EQ((*ok)->value, ChecksumBase64(a, kBody));
    auto bad = Check({{name, ChecksumBase64(a, "another body")}}, kBody);
    EXPECT_EQ(bad.status().remote_code(), "BadDigest") << name;
  }
}

TEST(FlexibleChecksumTest, TrailerValue) {
  const std::string crc = ChecksumBase64(ChecksumAlgorithm::kCrc64Nvme, kBody);
  KeyValues headers = {{"x-amz-trailer", "x-amz-checksum-crc64nvme"},
                       {"x-amz-sdk-checksum-algorithm", "CRC64NVME"}};
  auto ok = Check(headers, kBody, {{"x-amz-checksum-crc64nvme", crc}});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ((*ok)->value, crc);
  // A corrupted trailer checksum: BadDigest.
  std::string corrupt = ChecksumBase64(ChecksumAlgorithm::kCrc64Nvme, "kBody");
  EXPECT_EQ(Check(headers, kBody, {{"x-amz-checksum-crc64nvme", corrupt}}).status().remote_code(),
            "BadDigest");
  EXPECT_EQ(Check(headers, kBody, {}).status().remote_code(), "InvalidRequest");
  EXPECT_EQ(Check(headers, kBody, {{"x-amz-checksum-crc64nvme", "AAAA"}}).status().remote_code(),
            "InvalidRequest");
}

TEST(FlexibleChecksumTest, NoneOrMalformedOrTwo) {
  auto none =
      Check({{"content-type", "text/plain"}, {"x-amz-sdk-checksum-algorithm", "CRC32"}}, kBody);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  EXPECT_EQ(Check({{"x-amz-checksum-crc32", "not base64"}}, kBody).status().remote_code(),
            "InvalidRequest");
  EXPECT_EQ(
      Check({{"x-amz-checksum-sha1", ChecksumBase64(ChecksumAlgorithm::kCrc32, kBody)}}, kBody)
          .status()
          .remote_code(),
      "InvalidRequest");
  EXPECT_EQ(Check({{"x-amz-checksum-crc32", ChecksumBase64(ChecksumAlgorithm::kCrc32, kBody)},
                   {"x-amz-checksum-crc32c", ChecksumBase64(ChecksumAlgorithm::kCrc32c, kBody)}},
                  kBody)
                .status()
                .remote_code(),
            "InvalidRequest");
}

TEST(FlexibleChecksumTest, ComputedWhenNoneNamed) {
  auto check = ChecksumCheck::FromHeaders({}, ChecksumAlgorithm::kCrc64Nvme);
  ASSERT_TRUE(check.ok());
  EXPECT_TRUE(check->active());
  check->Update(kBody);
  auto got = check->Finish({});
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(*got);
  EXPECT_EQ((*got)->algorithm, ChecksumAlgorithm::kCrc64Nvme);
  EXPECT_EQ((*got)->value, ChecksumBase64(ChecksumAlgorithm::kCrc64Nvme, kBody));
  // A named one wins over the default.
  auto named =
      Check({{"x-amz-checksum-crc32", ChecksumBase64(ChecksumAlgorithm::kCrc32, kBody)}}, kBody);
  ASSERT_TRUE(named.ok());
  EXPECT_EQ((*named)->algorithm, ChecksumAlgorithm::kCrc32);
}

TEST(FlexibleChecksumTest, MultipartPlans) {
  auto plan = [](KeyValues h) { return MultipartChecksumPlan(h); };
  auto none = plan({});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->algorithm, ChecksumAlgorithm::kCrc64Nvme);
  EXPECT_EQ(none->type, ChecksumType::kFullObject);
  auto crc32 = plan({{"x-amz-checksum-algorithm", "CRC32"}});
  ASSERT_TRUE(crc32.ok());
  EXPECT_EQ(crc32->type, ChecksumType::kComposite);
  auto full =
      plan({{"x-amz-checksum-algorithm", "crc32c"}, {"x-amz-checksum-type", "FULL_OBJECT"}});
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->algorithm, ChecksumAlgorithm::kCrc32c);
  EXPECT_EQ(full->type, ChecksumType::kFullObject);
  EXPECT_EQ(plan({{"x-amz-checksum-algorithm", "SHA256"}, {"x-amz-checksum-type", "FULL_OBJECT"}})
                .status()
                .remote_code(),
            "InvalidRequest");
  EXPECT_EQ(plan({{"x-amz-checksum-algorithm", "CRC64NVME"}, {"x-amz-checksum-type", "COMPOSITE"}})
                .status()
                .remote_code(),
            "InvalidRequest");
  EXPECT_EQ(plan({{"x-amz-checksum-algorithm", "MD5"}}).status().remote_code(), "InvalidRequest");
  EXPECT_EQ(plan({{"x-amz-checksum-type", "PARTIAL"}}).status().remote_code(), "InvalidRequest");
}

// Python's zlib.crc32 and hashlib over the parts' big-endian checksums.
TEST(FlexibleChecksumTest, CompositeOfParts) {
  EXPECT_EQ(CompositeChecksum(ChecksumAlgorithm::kCrc32, {"7YH59g==", "OncRQw=="}), "1Fu2mQ==-2");
  EXPECT_EQ(ChecksumBase64(ChecksumAlgorithm::kCrc32, "hello "), "7YH59g==");
  EXPECT_EQ(CompositeChecksum(ChecksumAlgorithm::kSha256,
                              {"XjI1qDRuWkWF+MWFYvUFK4/iajuxIuHpbHZ4SWTfxGE=",
                               "SG6kYiTRu0+2gPNPfJrZao8k7Ii+c+qOWmxlJg6cuKc="}),
            "Zhie15keHg/OBlOZxcoF/BXCgYZaeimRvdZnwUZqkaQ=-2");
  KeyValues h;
  AddChecksumHeaders({ChecksumAlgorithm::kCrc32, "1Fu2mQ==-2", ChecksumType::kComposite}, &h);
  EXPECT_EQ(
      h, (KeyValues{{"x-amz-checksum-crc32", "1Fu2mQ==-2"}, {"x-amz-checksum-type", "COMPOSITE"}}));
}

}  // namespace
}  // namespace ferry::s3
