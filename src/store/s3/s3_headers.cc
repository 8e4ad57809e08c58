#include "store/s3/s3_headers.h"

#include "base/strings.h"
#include "crypto/digest.h"
#include "s3/xml.h"
#include "store/http/http_get.h"

namespace ferry::s3 {
namespace {

// The MD5 in GCS's "x-goog-hash: crc32c=...,md5=BASE64" as hex; "" when absent
// (composite objects carry only a CRC32C).
std::string GoogHashMd5(const std::string& hashes) {
  size_t at = hashes.find("md5=");
  if (at == std::string::npos) return "";
  size_t end = hashes.find(',', at);
  std::string b64 = hashes.substr(at + 4, end == std::string::npos ? end : end - at - 4);
  std::string raw;
  if (!Base64Decode(b64, &raw) || raw.size() != 16) return "";
  return HexLower(raw);
}

}  // namespace

bool EtagIsMd5(const http::Response& r) {
  std::string sse = AsciiLower(r.Get("x-amz-server-side-encryption"));
  if (sse.rfind("aws:kms", 0) == 0) return false;
  if (r.Find("x-amz-server-side-encryption-customer-algorithm")) return false;
  if (r.Find("x-goog-component-count")) return false;  // a GCS composite object
  return IsMd5Hex(Unquote(r.Get("etag")));
}

void AddObjectHeaders(const ObjectHeaders& h, http::Headers* out) {
  auto add = [out](const char* name, const std::string& v) {
    if (!v.empty()) out->emplace_back(name, v);
  };
  add("Content-Type", h.content_type);
  add("Content-Encoding", h.content_encoding);
  add("Content-Disposition", h.content_disposition);
  add("Cache-Control", h.cache_control);
  add("Content-Language", h.content_language);
  add("Expires", h.expires);
  for (const auto& [k, v] : h.user) out->emplace_back("x-amz-meta-" + k, v);
}

ObjectInfo InfoFromHeaders(std::string_view key, const http::Response& r) {
  ObjectInfo info = InfoFromAnswer(key, r);
  info.etag_is_md5 = EtagIsMd5(r);
  info.headers.expires = r.Get("expires");
  for (const auto& [k, v] : r.headers) {
    std::string name = AsciiLower(k);
    if (name.rfind("x-amz-meta-", 0) == 0) info.headers.user[name.substr(11)] = v;
    // GCS's XML API answers with its own names even to SigV4 clients.
    if (name.rfind("x-goog-meta-", 0) == 0) info.headers.user[name.substr(12)] = v;
  }
  info.md5_hex = GoogHashMd5(r.Get("x-goog-hash"));
  for (ChecksumAlgorithm a : kChecksumAlgorithms) {
    std::string value = r.Get(ChecksumHeaderName(a));
    if (value.empty()) continue;
    ObjectChecksum c{a, value, ChecksumType::kFullObject};
    // Before x-amz-checksum-type (2025) a composite was known by its "-N".
    std::string type = r.Get("x-amz-checksum-type");
    if (EqualsIgnoreCase(type, "COMPOSITE") ||
        (type.empty() && value.find('-') != std::string::npos)) {
      c.type = ChecksumType::kComposite;
    }
    info.checksum = std::move(c);
    break;
  }
  return info;
}

}  // namespace ferry::s3
