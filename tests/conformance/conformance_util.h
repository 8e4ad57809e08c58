#pragma once
// Helpers shared by the conformance cases: deterministic test bytes and the
// digests S3 defines ETags and Content-MD5 with.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "crypto/digest.h"
#include "store/object_store.h"

namespace ferry::conformance {

// `n` pseudo-random bytes, the same for the same seed.
inline std::string TestBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(rng() & 0xFF);
  return out;
}

inline std::string Md5Hex(const std::string& data) { return HexLower(Md5(data)); }
// (The cases compare ferry::BodyMd5(info) with Md5Hex(): the ETag on S3,
// the Content-MD5 property on Azure.)
inline std::string Md5Base64(const std::string& data) { return Base64Encode(Md5(data)); }

// S3's multipart ETag: MD5 of the concatenated binary part MD5s, "-N".
inline std::string MultipartEtag(const std::vector<std::string>& parts) {
  std::string md5s;
  for (const std::string& p : parts) {
    Md5Digest d = Md5(p);
    md5s.append(reinterpret_cast<const char*>(d.data()), d.size());
  }
  return HexLower(Md5(md5s)) + "-" + std::to_string(parts.size());
}

}  // namespace ferry::conformance
