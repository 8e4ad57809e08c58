#pragma once
// The flexible checksums of S3 (x-amz-checksum-*): CRC32, CRC32C,
// CRC64NVME, SHA1 and SHA256, computed incrementally over a streamed body.
//
// CRC32 and CRC32C come from Intel's ISA-L (libisal, hardware CRC and
// carry-less multiply where the CPU has them); CRC64NVME from
// crypto/crc64nvme.h (ISA-L 2.30, Debian 12's, predates it); SHA1 and
// SHA256 from OpenSSL. A checksum's wire form is the base64 of its
// big-endian bytes, as S3 sends and stores it.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace ferry {

enum class ChecksumAlgorithm { kCrc32, kCrc32c, kCrc64Nvme, kSha1, kSha256 };
inline constexpr ChecksumAlgorithm kChecksumAlgorithms[] = {
    ChecksumAlgorithm::kCrc32, ChecksumAlgorithm::kCrc32c, ChecksumAlgorithm::kCrc64Nvme,
    ChecksumAlgorithm::kSha1, ChecksumAlgorithm::kSha256};

// "CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256" (x-amz-checksum-algorithm,
// x-amz-sdk-checksum-algorithm; any case).
std::optional<ChecksumAlgorithm> ParseChecksumAlgorithm(std::string_view name);
std::string_view ChecksumAlgorithmName(ChecksumAlgorithm a);
// "x-amz-checksum-crc32", ... (lower case), and back.
std::string_view ChecksumHeaderName(ChecksumAlgorithm a);
std::optional<ChecksumAlgorithm> ChecksumFromHeaderName(std::string_view lower_name);
// Bytes of the raw checksum: 4, 4, 8, 20, 32.
size_t ChecksumSize(ChecksumAlgorithm a);
// True when `b64` is the base64 of exactly ChecksumSize(a) bytes.
bool IsChecksumValue(ChecksumAlgorithm a, std::string_view b64);

// x-amz-checksum-type: of the whole object's bytes, or (multipart uploads)
// the checksum of the parts' checksums, its value ending "-N".
enum class ChecksumType { kFullObject, kComposite };

// An object's checksum as stores keep it: an algorithm, its base64 value
// and its type.
struct ObjectChecksum {
  ChecksumAlgorithm algorithm = ChecksumAlgorithm::kCrc64Nvme;
  std::string value;
  ChecksumType type = ChecksumType::kFullObject;

  bool operator==(const ObjectChecksum&) const = default;
};

// Incremental checksum of one algorithm. Not thread-safe.
class Checksummer {
 public:
  explicit Checksummer(ChecksumAlgorithm a);
  ~Checksummer();
  Checksummer(Checksummer&&) noexcept;
  Checksummer& operator=(Checksummer&&) noexcept;

  ChecksumAlgorithm algorithm() const { return algorithm_; }
  void Update(std::string_view data);
  // The raw big-endian bytes; the object must not be updated afterwards.
  std::string FinishRaw();
  // Base64 of FinishRaw(): the header value.
  std::string FinishBase64();

 private:
  ChecksumAlgorithm algorithm_;
  uint64_t crc_ = 0;
  struct Sha;
  std::unique_ptr<Sha> sha_;  // SHA1 and SHA256 (OpenSSL)
};

// One-shot form.
std::string ChecksumBase64(ChecksumAlgorithm a, std::string_view data);

// The CRCs as numbers (tests and composite checksums).
uint32_t Crc32(uint32_t crc, std::string_view data);
uint32_t Crc32c(uint32_t crc, std::string_view data);

}  // namespace ferry
