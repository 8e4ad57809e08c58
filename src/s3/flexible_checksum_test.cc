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

}  // namespace
}  // namespace ferry::s3
