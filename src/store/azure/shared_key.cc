#include "store/azure/shared_key.h"

#include <algorithm>
#include <map>
#include <vector>

#include "base/strings.h"
#include "crypto/digest.h"

namespace ferry::azure {
namespace {

std::string HeaderValue(const http::Headers& headers, std::string_view name) {
  for (const auto& [k, v] : headers) {
    if (EqualsIgnoreCase(k, name)) return v;
  }
  return "";
}

// Trims the value and folds each run of blanks to one space.
std::string FoldBlanks(std::string_view v) {
  v = TrimOws(v);
  std::string out;
  bool blank = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      blank = true;
      continue;
    }
    if (blank) out += ' ';
    blank = false;
    out += c;
  }
  return out;
}

}  // namespace

std::string CanonicalizedHeaders(const http::Headers& headers) {
  std::vector<std::pair<std::string, std::string>> ms;
  for (const auto& [k, v] : headers) {
    std::string name = AsciiLower(k);
    if (name.rfind("x-ms-", 0) == 0) ms.emplace_back(std::move(name), FoldBlanks(v));
  }
  std::stable_sort(ms.begin(), ms.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (const auto& [k, v] : ms) out += k + ":" + v + "\n";
  return out;
}

std::string CanonicalizedResource(std::string_view account, std::string_view path,
                                  const s3::KeyValues& query) {
  std::string out = "/" + std::string(account) + std::string(path.empty() ? "/" : path);
  std::map<std::string, std::vector<std::string>> params;
  for (const auto& [k, v] : query) params[AsciiLower(k)].push_back(v);
  for (auto& [k, values] : params) {
    std::sort(values.begin(), values.end());
    out += "\n" + k + ":";
    for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + values[i];
  }
  return out;
}

std::string StringToSign(std::string_view account, const SharedKeyRequest& req) {
  const http::Headers& h = req.headers;
  std::string length = HeaderValue(h, "content-length");
  if (length == "0") length.clear();
  std::string out = req.method + "\n";
  for (const char* name : {"content-encoding", "content-language"}) out += HeaderValue(h, name) + "\n";
  out += length + "\n";
  for (const char* name : {"content-md5", "content-type", "date", "if-modified-since", "if-match",
                           "if-none-match", "if-unmodified-since", "range"}) {
    out += HeaderValue(h, name) + "\n";
  }
  out += CanonicalizedHeaders(h);
  out += CanonicalizedResource(account, req.path, req.query);
  return out;
}

std::string SharedKeyAuthorization(std::string_view account, std::string_view raw_key,
                                   const SharedKeyRequest& req) {
  Sha256Digest mac = HmacSha256(raw_key, StringToSign(account, req));
  return "SharedKey " + std::string(account) + ":" + Base64Encode(mac);
}

}  // namespace ferry::azure
