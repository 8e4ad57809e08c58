#include "store/local/sidecar.h"

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "store/local/fs_util.h"

namespace ferry::local {
namespace {

using nlohmann::json;

json HeadersToJson(const ObjectHeaders& h) {
  json j = json::object();
  const auto put = [&](const char* name, const std::string& v) {
    if (!v.empty()) j[name] = v;
  };
  put("content_type", h.content_type);
  put("content_encoding", h.content_encoding);
  put("content_disposition", h.content_disposition);
  put("cache_control", h.cache_control);
  put("content_language", h.content_language);
  put("expires", h.expires);
  if (!h.user.empty()) j["user"] = h.user;
  return j;
}

// Throws nothing: every access is type-checked first.
std::optional<ObjectHeaders> HeadersFromJson(const json& j) {
  if (!j.is_object()) return std::nullopt;
  ObjectHeaders h;
  const auto get = [&](const char* name, std::string* out) {
    auto it = j.find(name);
    if (it == j.end()) return true;
    if (!it->is_string()) return false;
    *out = it->get<std::string>();
    return true;
  };
  if (!get("content_type", &h.content_type) || !get("content_encoding", &h.content_encoding) ||
      !get("content_disposition", &h.content_disposition) ||
      !get("cache_control", &h.cache_control) || !get("content_language", &h.content_language) ||
      !get("expires", &h.expires)) {
    return std::nullopt;
  }
  if (auto it = j.find("user"); it != j.end()) {
    if (!it->is_object()) return std::nullopt;
    for (const auto& [name, value] : it->items()) {
      if (!value.is_string()) return std::nullopt;
      h.user[name] = value.get<std::string>();
    }
  }
  return h;
}

std::optional<json> ParseJson(std::string_view text) {
  json j = json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

}  // namespace

std::string SidecarName(std::string_view data_name) {
  std::string name = ".";
  name.append(data_name);
  name += "%meta";
  return name;
}

std::string SerializeMeta(const ObjectMeta& meta) {
  json j = {{"v", 1},
            {"etag", meta.etag},
            {"size", meta.size},
            {"mtime_ns", meta.mtime_ns},
            {"headers", HeadersToJson(meta.headers)}};
  // Replace invalid UTF-8 rather than throw; headers are meant to be text.
  return DumpJson(j);
}

std::optional<ObjectMeta> ParseMeta(std::string_view text) {
  std::optional<json> j = ParseJson(text);
  if (!j || !j->is_object()) return std::nullopt;
  auto v = j->find("v");
  auto etag = j->find("etag");
  auto size = j->find("size");
  auto mtime = j->find("mtime_ns");
  auto headers = j->find("headers");
  if (v == j->end() || !v->is_number_integer() || v->get<int>() != 1) return std::nullopt;
  if (etag == j->end() || !etag->is_string()) return std::nullopt;
  if (size == j->end() || !size->is_number_unsigned()) return std::nullopt;
  if (mtime == j->end() || !mtime->is_number_integer()) return std::nullopt;
  ObjectMeta meta;
  meta.etag = etag->get<std::string>();
  meta.size = size->get<uint64_t>();
  meta.mtime_ns = mtime->get<int64_t>();
  if (headers != j->end()) {
    std::optional<ObjectHeaders> h = HeadersFromJson(*headers);
    if (!h) return std::nullopt;
    meta.headers = std::move(*h);
  }
  return meta;
}

bool MetaMatches(const ObjectMeta& meta, const struct stat& st) {
  return S_ISREG(st.st_mode) && meta.size == static_cast<uint64_t>(st.st_size) &&
         meta.mtime_ns == MtimeNs(st);
}

std::string SerializeHeaders(const ObjectHeaders& headers) {
  return DumpJson(HeadersToJson(headers));
}

std::optional<ObjectHeaders> ParseHeaders(std::string_view text) {
  std::optional<json> j = ParseJson(text);
  if (!j) return std::nullopt;
  return HeadersFromJson(*j);
}

}  // namespace ferry::local
