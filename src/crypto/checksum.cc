#include "crypto/checksum.h"

#include <isa-l/crc.h>
#include <openssl/evp.h>

#include <algorithm>
#include <climits>
#include <stdexcept>

#include "base/strings.h"
#include "crypto/crc64nvme.h"
#include "crypto/digest.h"

namespace ferry {
namespace {

struct AlgorithmInfo {
  ChecksumAlgorithm algorithm;
  std::string_view name;
  std::string_view header;
  size_t size;
};

constexpr AlgorithmInfo kInfo[] = {
    {ChecksumAlgorithm::kCrc32, "CRC32", "x-amz-checksum-crc32", 4},
    {ChecksumAlgorithm::kCrc32c, "CRC32C", "x-amz-checksum-crc32c", 4},
    {ChecksumAlgorithm::kCrc64Nvme, "CRC64NVME", "x-amz-checksum-crc64nvme", 8},
    {ChecksumAlgorithm::kSha1, "SHA1", "x-amz-checksum-sha1", 20},
    {ChecksumAlgorithm::kSha256, "SHA256", "x-amz-checksum-sha256", 32},
};

const AlgorithmInfo& Info(ChecksumAlgorithm a) { return kInfo[static_cast<size_t>(a)]; }

// ISA-L takes an int length: feed it in pieces below INT_MAX.
template <typename Fn>
void InPieces(std::string_view data, Fn fn) {
  constexpr size_t kPiece = size_t{1} << 30;
  while (!data.empty()) {
    size_t n = std::min(data.size(), kPiece);
    fn(reinterpret_cast<const unsigned char*>(data.data()), n);
    data.remove_prefix(n);
  }
}

std::string BigEndian(uint64_t v, size_t bytes) {
  std::string out(bytes, '\0');
  for (size_t i = 0; i < bytes; ++i) out[bytes - 1 - i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

}  // namespace

std::optional<ChecksumAlgorithm> ParseChecksumAlgorithm(std::string_view name) {
  for (const auto& i : kInfo) {
    if (EqualsIgnoreCase(i.name, name)) return i.algorithm;
  }
  return std::nullopt;
}

std::string_view ChecksumAlgorithmName(ChecksumAlgorithm a) { return Info(a).name; }
std::string_view ChecksumHeaderName(ChecksumAlgorithm a) { return Info(a).header; }
size_t ChecksumSize(ChecksumAlgorithm a) { return Info(a).size; }

std::optional<ChecksumAlgorithm> ChecksumFromHeaderName(std::string_view lower_name) {
  for (const auto& i : kInfo) {
    if (i.header == lower_name) return i.algorithm;
  }
  return std::nullopt;
}

bool IsChecksumValue(ChecksumAlgorithm a, std::string_view b64) {
  std::string raw;
  return Base64Decode(b64, &raw) && raw.size() == ChecksumSize(a);
}

uint32_t Crc32(uint32_t crc, std::string_view data) {
  InPieces(data, [&](const unsigned char* p, size_t n) { crc = crc32_gzip_refl(crc, p, n); });
  return crc;
}

uint32_t Crc32c(uint32_t crc, std::string_view data) {
  // ISA-L's iSCSI CRC neither inverts its input nor its result.
  crc = ~crc;
  InPieces(data, [&](const unsigned char* p, size_t n) {
    crc = crc32_iscsi(const_cast<unsigned char*>(p), static_cast<int>(n), crc);
  });
  return ~crc;
}

// SHA1 and SHA256 through OpenSSL's EVP, each algorithm fetched once.
struct Checksummer::Sha {
  struct Free {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
  };
  std::unique_ptr<EVP_MD_CTX, Free> ctx{EVP_MD_CTX_new()};

  explicit Sha(ChecksumAlgorithm a) {
    static EVP_MD* const sha1 = EVP_MD_fetch(nullptr, "SHA1", nullptr);
    static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA2-256", nullptr);
    const EVP_MD* md = a == ChecksumAlgorithm::kSha1 ? sha1 : sha256;
    if (!ctx || md == nullptr || EVP_DigestInit_ex2(ctx.get(), md, nullptr) != 1) {
      throw std::runtime_error("OpenSSL: cannot start a " + std::string(ChecksumAlgorithmName(a)));
    }
  }
  void Update(std::string_view data) {
    if (EVP_DigestUpdate(ctx.get(), data.data(), data.size()) != 1) {
      throw std::runtime_error("OpenSSL: digest update failed");
    }
  }
  std::string Finish() {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(ctx.get(), out, &len) != 1) {
      throw std::runtime_error("OpenSSL: digest final failed");
    }
    return std::string(reinterpret_cast<char*>(out), len);
  }
};

Checksummer::Checksummer(ChecksumAlgorithm a) : algorithm_(a) {
  if (a == ChecksumAlgorithm::kSha1 || a == ChecksumAlgorithm::kSha256) {
    sha_ = std::make_unique<Sha>(a);
  }
}

Checksummer::~Checksummer() = default;
Checksummer::Checksummer(Checksummer&&) noexcept = default;
Checksummer& Checksummer::operator=(Checksummer&&) noexcept = default;

void Checksummer::Update(std::string_view data) {
  switch (algorithm_) {
    case ChecksumAlgorithm::kCrc32:
      crc_ = Crc32(static_cast<uint32_t>(crc_), data);
      break;
    case ChecksumAlgorithm::kCrc32c:
      crc_ = Crc32c(static_cast<uint32_t>(crc_), data);
      break;
    case ChecksumAlgorithm::kCrc64Nvme:
      crc_ = Crc64Nvme(crc_, data);
      break;
    case ChecksumAlgorithm::kSha1:
    case ChecksumAlgorithm::kSha256:
      sha_->Update(data);
      break;
  }
}

std::string Checksummer::FinishRaw() {
  if (sha_) return sha_->Finish();
  return BigEndian(crc_, ChecksumSize(algorithm_));
}

std::string Checksummer::FinishBase64() { return Base64Encode(FinishRaw()); }

std::string ChecksumBase64(ChecksumAlgorithm a, std::string_view data) {
  Checksummer c(a);
  c.Update(data);
  return c.FinishBase64();
}

}  // namespace ferry
