#include "store/azure/azure_headers.h"

#include "base/strings.h"
#include "store/azure/azure_xml.h"
#include "store/http/http_get.h"

namespace ferry::azure {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

std::string EncodeMetadataName(std::string_view name) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    bool letter = c >= 'a' && c <= 'z';
    bool digit = c >= '0' && c <= '9';
    if (letter || (digit && i > 0)) {
      out += static_cast<char>(c);
    } else {
      out += "_x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      out += '_';
    }
  }
  return out;
}

std::string DecodeMetadataName(std::string_view name) {
  std::string out;
  for (size_t i = 0; i < name.size();) {
    if (name[i] == '_' && i + 4 < name.size() && name[i + 1] == 'x' && name[i + 4] == '_') {
      int hi = HexDigit(name[i + 2]), lo = HexDigit(name[i + 3]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 5;
        continue;
      }
    }
    out += name[i++];
  }
  return out;
}

void AddMetadataHeaders(const ObjectHeaders& h, http::Headers* out) {
  for (const auto& [k, v] : h.user) out->emplace_back("x-ms-meta-" + EncodeMetadataName(k), v);
}

void AddBlobHeaders(const ObjectHeaders& h, bool all_properties, http::Headers* out) {
  auto add = [&](const char* name, const std::string& v) {
    if (all_properties || !v.empty()) out->emplace_back(name, v);
  };
  add("x-ms-blob-content-type", h.content_type);
  add("x-ms-blob-content-encoding", h.content_encoding);
  add("x-ms-blob-content-disposition", h.content_disposition);
  add("x-ms-blob-cache-control", h.cache_control);
  add("x-ms-blob-content-language", h.content_language);
  AddMetadataHeaders(h, out);
}

ObjectInfo InfoFromBlobResponse(std::string_view key, const http::Response& r) {
  bool ranged = false;
  ObjectInfo info = InfoFromAnswer(key, r, &ranged);
  info.etag_is_md5 = false;
  std::string md5 = r.Get("x-ms-blob-content-md5");
  if (md5.empty() && !ranged) md5 = r.Get("content-md5");
  info.md5_hex = Md5HexFromBase64(md5);
  for (const auto& [k, v] : r.headers) {
    std::string name = AsciiLower(k);
    if (name.rfind("x-ms-meta-", 0) == 0) info.headers.user[DecodeMetadataName(name.substr(10))] = v;
  }
  return info;
}

}  // namespace ferry::azure
