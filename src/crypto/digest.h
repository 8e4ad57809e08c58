#pragma once
// Hashes and encodings used by the S3 protocol and by integrity checks:
// SHA-256, HMAC-SHA256, HMAC-SHA1 and MD5 (OpenSSL 3 EVP), hex and base64.
// The hashes throw std::runtime_error when OpenSSL refuses one (a broken
// or FIPS-only installation without MD5) rather than return a digest of
// zeros; a working OpenSSL never does.

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ferry {

using Sha256Digest = std::array<uint8_t, 32>;
using Md5Digest = std::array<uint8_t, 16>;

Sha256Digest Sha256(std::string_view data);
Sha256Digest HmacSha256(std::string_view key, std::string_view data);
// HMAC-SHA1: S3's legacy signature version 2 (s3/sigv2_query.h) only.
std::array<uint8_t, 20> HmacSha1(std::string_view key, std::string_view data);
Md5Digest Md5(std::string_view data);

std::string HexLower(const uint8_t* data, size_t n);
// Hex of raw digest bytes held in a string (StreamingDigest::Finish()).
inline std::string HexLower(std::string_view raw) {
  return HexLower(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
}
// True for 32 hex digits: an ETag that can be an MD5.
bool IsMd5Hex(std::string_view etag);
// ETag of a completed multipart upload: hex MD5 of the concatenated binary
// MD5s of the parts, then "-" and the part count. `part_md5_hex` in part
// order, each 32 hex digits (either case).
std::string MultipartEtag(const std::vector<std::string>& part_md5_hex);
// Content-MD5 (base64 of the 16 bytes) of an MD5 given as 32 hex digits.
std::string ContentMd5FromHex(std::string_view md5_hex);
template <size_t N>
std::string HexLower(const std::array<uint8_t, N>& d) {
  return HexLower(d.data(), N);
}
inline std::string AsBytes(const Sha256Digest& d) {
  return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

std::string Base64Encode(std::string_view data);
template <size_t N>
std::string Base64Encode(const std::array<uint8_t, N>& d) {
  return Base64Encode(std::string_view(reinterpret_cast<const char*>(d.data()), N));
}
// Returns false on malformed input.
bool Base64Decode(std::string_view in, std::string* out);

// HMAC-SHA256 under one key, keyed once and reused for many messages (a
// SigV4 signing key signs every request of a day). Not thread-safe: keep
// one per thread.
class HmacSha256Key {
 public:
  explicit HmacSha256Key(std::string_view key);
  ~HmacSha256Key();
  HmacSha256Key(const HmacSha256Key&) = delete;
  HmacSha256Key& operator=(const HmacSha256Key&) = delete;
  Sha256Digest Mac(std::string_view data);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Incremental hashing for streamed bodies.
class StreamingDigest {
 public:
  enum class Kind { kMd5, kSha256 };
  explicit StreamingDigest(Kind kind);
  ~StreamingDigest();
  StreamingDigest(const StreamingDigest&) = delete;
  StreamingDigest& operator=(const StreamingDigest&) = delete;
  void Update(std::string_view data);
  // Raw digest bytes; the object is reset afterwards.
  std::string Finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ferry
