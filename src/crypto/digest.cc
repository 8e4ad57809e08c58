#include "crypto/digest.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <stdexcept>

namespace ferry {
namespace {

template <size_t N>
std::array<uint8_t, N> Digest(const EVP_MD* md, std::string_view data) {
  std::array<uint8_t, N> out{};
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out.data(), &len, md, nullptr);
  return out;
}

}  // namespace

Sha256Digest Sha256(std::string_view data) { return Digest<32>(EVP_sha256(), data); }
Md5Digest Md5(std::string_view data) { return Digest<16>(EVP_md5(), data); }

Sha256Digest HmacSha256(std::string_view key, std::string_view data) {
  Sha256Digest out{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(), &len);
  return out;
}

std::string HexLower(const uint8_t* data, size_t n) {
  static const char kHex[] = "0123456789abcdef";
  std::string out(n * 2, '\0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kHex[data[i] >> 4];
    out[2 * i + 1] = kHex[data[i] & 15];
  }
  return out;
}

bool IsMd5Hex(std::string_view etag) {
  return etag.size() == 32 && etag.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
}

namespace {
int HexNibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 0;
}
}  // namespace

namespace {
// Appends the bytes that `hex` (an even number of hex digits) spells.
void AppendHexBytes(std::string_view hex, std::string* out) {
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    *out += static_cast<char>(HexNibble(hex[i]) * 16 + HexNibble(hex[i + 1]));
  }
}
}  // namespace

std::string MultipartEtag(const std::vector<std::string>& part_md5_hex) {
  std::string binary;
  binary.reserve(part_md5_hex.size() * 16);
  for (const auto& hex : part_md5_hex) AppendHexBytes(hex, &binary);
  return HexLower(Md5(binary)) + "-" + std::to_string(part_md5_hex.size());
}

std::string ContentMd5FromHex(std::string_view md5_hex) {
  std::string raw;
  AppendHexBytes(md5_hex, &raw);
  return Base64Encode(raw);
}

std::string Base64Encode(std::string_view data) {
  std::string out(4 * ((data.size() + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(data.data()),
                          static_cast<int>(data.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

bool Base64Decode(std::string_view in, std::string* out) {
  if (in.size() % 4 != 0) return false;
  std::string buf(3 * in.size() / 4, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(buf.data()),
                          reinterpret_cast<const unsigned char*>(in.data()),
                          static_cast<int>(in.size()));
  if (n < 0) return false;
  size_t len = static_cast<size_t>(n);
  // EVP_DecodeBlock counts padding as zero bytes.
  if (!in.empty() && in.back() == '=') --len;
  if (in.size() >= 2 && in[in.size() - 2] == '=') --len;
  buf.resize(len);
  *out = std::move(buf);
  return true;
}

struct StreamingDigest::Impl {
  EVP_MD_CTX* ctx = nullptr;
};

StreamingDigest::StreamingDigest(Kind kind) : impl_(new Impl), kind_(kind) {
  impl_->ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(impl_->ctx, kind == Kind::kMd5 ? EVP_md5() : EVP_sha256(), nullptr);
}

StreamingDigest::~StreamingDigest() { EVP_MD_CTX_free(impl_->ctx); }

void StreamingDigest::Update(std::string_view data) {
  EVP_DigestUpdate(impl_->ctx, data.data(), data.size());
}

std::string StreamingDigest::Finish() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(impl_->ctx, out, &len);
  EVP_DigestInit_ex(impl_->ctx, kind_ == Kind::kMd5 ? EVP_md5() : EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<char*>(out), len);
}

}  // namespace ferry
