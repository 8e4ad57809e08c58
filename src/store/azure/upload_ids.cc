#include "store/azure/upload_ids.h"

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "crypto/digest.h"

namespace ferry::azure {
namespace {

constexpr char kBlockPrefix[] = "ferry-";
constexpr size_t kNonceLen = 24;

bool IsHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string ToBase64Url(std::string_view data) {
  std::string b = Base64Encode(data);
  while (!b.empty() && b.back() == '=') b.pop_back();
  for (char& c : b) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return b;
}

bool FromBase64Url(std::string_view text, std::string* out) {
  std::string b(text);
  for (char& c : b) c = c == '-' ? '+' : c == '_' ? '/' : c;
  while (b.size() % 4 != 0) b += '=';
  return Base64Decode(b, out);
}

nlohmann::json HeadersToJson(const ObjectHeaders& h) {
  nlohmann::json j = nlohmann::json::object();
  auto put = [&](const char* k, const std::string& v) {
    if (!v.empty()) j[k] = v;
  };
  put("ct", h.content_type);
  put("ce", h.content_encoding);
  put("cd", h.content_disposition);
  put("cc", h.cache_control);
  put("cl", h.content_language);
  if (!h.user.empty()) j["m"] = h.user;
  return j;
}

bool HeadersFromJson(const nlohmann::json& j, ObjectHeaders* h) {
  if (!j.is_object()) return false;
  auto get = [&](const char* k, std::string* v) {
    if (j.contains(k) && j[k].is_string()) *v = j[k].get<std::string>();
  };
  get("ct", &h->content_type);
  get("ce", &h->content_encoding);
  get("cd", &h->content_disposition);
  get("cc", &h->cache_control);
  get("cl", &h->content_language);
  if (j.contains("m")) {
    if (!j["m"].is_object()) return false;
    for (const auto& [k, v] : j["m"].items()) {
      if (!v.is_string()) return false;
      h->user[k] = v.get<std::string>();
    }
  }
  return true;
}

}  // namespace

std::string NewUploadNonce(TimePoint now, uint64_t random) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%012llx%012llx",
                static_cast<unsigned long long>(ms) & 0xffffffffffffULL,
                static_cast<unsigned long long>(random) & 0xffffffffffffULL);
  return buf;
}

TimePoint NonceTime(std::string_view nonce) {
  uint64_t ms = std::strtoull(std::string(nonce.substr(0, 12)).c_str(), nullptr, 16);
  return TimePoint(std::chrono::milliseconds(ms));
}

std::string FormatUploadId(const UploadId& id) {
  nlohmann::json j = HeadersToJson(id.headers);
  if (j.empty()) return id.nonce;
  return id.nonce + "." + ToBase64Url(DumpJson(j));
}

Result<UploadId> ParseUploadId(std::string_view text) {
  Status unknown = Status::NotFound("no such multipart upload");
  UploadId id;
  size_t dot = text.find('.');
  id.nonce = std::string(text.substr(0, dot));
  if (id.nonce.size() != kNonceLen || !IsHex(id.nonce)) return unknown;
  if (dot == std::string_view::npos) return id;
  std::string json;
  if (!FromBase64Url(text.substr(dot + 1), &json)) return unknown;
  auto j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !HeadersFromJson(j, &id.headers)) return unknown;
  return id;
}

std::string BlockId(std::string_view nonce, int part) {
  char num[8];
  std::snprintf(num, sizeof(num), "%05d", part);
  return kBlockPrefix + std::string(nonce) + "-" + num;
}

bool ParseBlockId(std::string_view raw, std::string* nonce, int* part) {
  const size_t prefix = sizeof(kBlockPrefix) - 1;
  if (raw.size() != prefix + kNonceLen + 6 || raw.substr(0, prefix) != kBlockPrefix ||
      raw[prefix + kNonceLen] != '-') {
    return false;
  }
  std::string_view n = raw.substr(prefix, kNonceLen), p = raw.substr(prefix + kNonceLen + 1);
  if (!IsHex(n)) return false;
  int value = 0;
  for (char c : p) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  *nonce = std::string(n);
  *part = value;
  return true;
}

}  // namespace ferry::azure
