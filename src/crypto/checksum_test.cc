#include "crypto/checksum.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>

#include "crypto/crc64nvme.h"
#include "crypto/digest.h"

namespace ferry {
namespace {

constexpr std::string_view kCheck = "123456789";

// Bit-at-a-time references, written from the CRC catalogue's parameters.
uint32_t BitwiseCrc32c(std::string_view data) {
  uint32_t crc = 0xffffffffu;
  for (unsigned char b : data) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc & 1) ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
  }
  return ~crc;
}

uint64_t BitwiseCrc64Nvme(std::string_view data) {
  uint64_t crc = ~0ull;
  for (unsigned char b : data) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc & 1) ? (crc >> 1) ^ 0x9a6c9329ac4bc9b5ull : crc >> 1;
  }
  return ~crc;
}

std::string RandomBytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

TEST(ChecksumTest, CatalogueCheckValues) {
  EXPECT_EQ(Crc32(0, kCheck), 0xCBF43926u);
  EXPECT_EQ(Crc32c(0, kCheck), 0xE3069283u);
  EXPECT_EQ(Crc64Nvme(0, kCheck), 0xAE8B14860A799888ull);
  EXPECT_EQ(Crc32(0, ""), 0u);
  EXPECT_EQ(Crc64Nvme(0, ""), 0u);
}

TEST(ChecksumTest, AgreesWithIndependentImplementationsAtEverySplit) {
  const std::string data = RandomBytes(4099, 7);
  uint32_t zlib_crc = crc32(0, reinterpret_cast<const Bytef*>(data.data()), data.size());
  EXPECT_EQ(Crc32(0, data), zlib_crc);
  EXPECT_EQ(Crc32c(0, data), BitwiseCrc32c(data));
  EXPECT_EQ(Crc64Nvme(0, data), BitwiseCrc64Nvme(data));
  for (size_t split : {0ul, 1ul, 7ul, 8ul, 9ul, 63ul, 2048ul, 4098ul, 4099ul}) {
    std::string_view a = std::string_view(data).substr(0, split);
    std::string_view b = std::string_view(data).substr(split);
    EXPECT_EQ(Crc32(Crc32(0, a), b), zlib_crc) << split;
    EXPECT_EQ(Crc32c(Crc32c(0, a), b), BitwiseCrc32c(data)) << split;
    EXPECT_EQ(Crc64Nvme(Crc64Nvme(0, a), b), BitwiseCrc64Nvme(data)) << split;
  }
}

// Crc64Nvme folds with PCLMULQDQ from 64 bytes where the CPU has it: every
// length across the fold widths (16-byte lanes, 64-byte steps), at offsets
// that misalign the loads, from zero and nonzero registers.
TEST(ChecksumTest, Crc64NvmeAgreesWithBitwiseAtEveryLengthAndOffset) {
  const std::string data = RandomBytes(600 + 64, 11);
  for (size_t offset : {0ul, 1ul, 3ul, 7ul, 8ul, 15ul, 16ul, 33ul, 63ul}) {
    for (size_t n = 0; n <= 600; ++n) {
      std::string_view v = std::string_view(data).substr(offset, n);
      ASSERT_EQ(Crc64Nvme(0, v), BitwiseCrc64Nvme(v)) << offset << " " << n;
    }
  }
  const std::string big = RandomBytes((1 << 20) + 77, 12);
  EXPECT_EQ(Crc64Nvme(0, big), BitwiseCrc64Nvme(big));
}

TEST(ChecksumTest, Crc64NvmeChainsAtEverySplit) {
  const std::string data = RandomBytes(300, 13);
  for (size_t n : {64ul, 65ul, 127ul, 128ul, 200ul, 300ul}) {
    std::string_view v = std::string_view(data).substr(0, n);
    const uint64_t whole = BitwiseCrc64Nvme(v);
    for (size_t i = 0; i <= n; ++i) {
      EXPECT_EQ(Crc64Nvme(Crc64Nvme(0, v.substr(0, i)), v.substr(i)), whole) << n << " " << i;
      for (size_t j = i; j <= n; j += 17) {
        uint64_t crc = Crc64Nvme(0, v.substr(0, i));
        crc = Crc64NvmePortable(crc, v.substr(i, j - i));
        EXPECT_EQ(Crc64Nvme(crc, v.substr(j)), whole) << n << " " << i << " " << j;
      }
    }
  }
}

TEST(ChecksumTest, Crc64NvmePortableEqualsDispatched) {
  EXPECT_EQ(Crc64NvmePortable(0, kCheck), 0xAE8B14860A799888ull);
  const std::string data = RandomBytes(5000, 14);
  for (size_t n = 0; n <= data.size(); n += (n < 300 ? 1 : 97)) {
    for (uint64_t crc : {0ull, 0x0123456789abcdefull, ~0ull}) {
      std::string_view v = std::string_view(data).substr(data.size() - n);
      ASSERT_EQ(Crc64NvmePortable(crc, v), Crc64Nvme(crc, v)) << n << " " << crc;
    }
  }
}

TEST(ChecksumTest, WireFormIsBase64OfBigEndianBytes) {
  // 0xCBF43926 -> bytes cb f4 39 26.
  EXPECT_EQ(ChecksumBase64(ChecksumAlgorithm::kCrc32, kCheck),
            Base64Encode(std::string("\xcb\xf4\x39\x26", 4)));
  EXPECT_EQ(ChecksumBase64(ChecksumAlgorithm::kCrc64Nvme, kCheck),
            Base64Encode(std::string("\xae\x8b\x14\x86\x0a\x79\x98\x88", 8)));
  std::string raw;
  ASSERT_TRUE(Base64Decode(ChecksumBase64(ChecksumAlgorithm::kSha1, "abc"), &raw));
  EXPECT_EQ(HexLower(raw), "a9993e364706816aba3e25717850c26c9cd0d89d");
  ASSERT_TRUE(Base64Decode(ChecksumBase64(ChecksumAlgorithm::kSha256, ""), &raw));
  EXPECT_EQ(HexLower(raw), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(ChecksumTest, StreamedEqualsOneShotForEveryAlgorithm) {
  const std::string data = RandomBytes(100000, 3);
  for (ChecksumAlgorithm a : kChecksumAlgorithms) {
    Checksummer c(a);
    for (size_t i = 0; i < data.size(); i += 997) c.Update(std::string_view(data).substr(i, 997));
    std::string b64 = c.FinishBase64();
    EXPECT_EQ(b64, ChecksumBase64(a, data)) << ChecksumAlgorithmName(a);
    EXPECT_TRUE(IsChecksumValue(a, b64));
  }
}

TEST(ChecksumTest, NamesAndHeaders) {
  for (ChecksumAlgorithm a : kChecksumAlgorithms) {
    EXPECT_EQ(ParseChecksumAlgorithm(ChecksumAlgorithmName(a)), a);
    EXPECT_EQ(ChecksumFromHeaderName(ChecksumHeaderName(a)), a);
  }
  EXPECT_EQ(ParseChecksumAlgorithm("crc32c"), ChecksumAlgorithm::kCrc32c);
  EXPECT_FALSE(ParseChecksumAlgorithm("MD5"));
  EXPECT_FALSE(ChecksumFromHeaderName("x-amz-checksum-type"));
  EXPECT_FALSE(IsChecksumValue(ChecksumAlgorithm::kCrc32, "AAAAAAAA"));  // 6 bytes
  EXPECT_FALSE(IsChecksumValue(ChecksumAlgorithm::kCrc32, "not base64!"));
}

}  // namespace
}  // namespace ferry
