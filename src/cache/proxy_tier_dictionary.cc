// Compression dictionaries between cache tiers. In a fleet, a browser may
// have got a bundle's old version (its dictionary) through one cache and
// ask another for the new one. The parent tier saw both: it remembers the
// marked answers it sent lower tiers by the SHA-256 of their bytes
// (NoteTierDictionary), and answers `GET /_ferry/dictionary/HEX` from
// --admin-allow addresses with the stored bytes, the mark, the path they
// were answered for and their remaining lifetime (ExportDictionary). A
// lower tier asked for a dictionary it does not know asks its parents
// (FetchDictionary), checks the bytes against the hash, and keeps it for
// its own client's origin; a parent that has none is not asked again for
// that hash for a minute.
#include <spdlog/spdlog.h>

#include "base/strings.h"
#include "cache/parent_choice.h"
#include "cache/proxy_internal.h"
#include "codec/zstd_codec.h"

namespace ferry::cache {
namespace {

using namespace proxy_detail;  // NOLINT: the Proxy's own helpers

constexpr std::string_view kExportPath = "/_ferry/dictionary/";
constexpr int64_t kMissSeconds = 60;

std::optional<std::string> FromHex(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    unsigned v = 0;
    for (char c : hex.substr(i, 2)) {
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= c - '0';
      else if (c >= 'a' && c <= 'f')
        v |= c - 'a' + 10;
      else
        return std::nullopt;
    }
    out.push_back(static_cast<char>(v));
  }
  return out;
}

}  // namespace

bool Proxy::IsDictionaryExport(std::string_view path) { return path.starts_with(kExportPath); }

void Proxy::NoteTierDictionary(const ProxyRequest& req,
                               const std::shared_ptr<const CachedObject>& object,
                               const DictionaryMark& mark) {
  const std::string noted = "tier\n" + object->meta.key;
  {
    std::lock_guard lock(dict_mu_);
    auto it = dictionary_of_.find(noted);
    if (it != dictionary_of_.end() && it->second.first == object->id) return;
  }
  std::shared_ptr<const CachedObject> plain = DecodedCopy(*object);
  if (!plain) return;
  TierDictionary t;
  t.key = object->meta.key;
  t.host = AsciiLower(HeaderValue(req.headers, "host"));
  t.path = std::string(std::string_view(req.target).substr(0, req.target.find('?')));
  t.id = object->id;
  t.mark = mark;
  std::lock_guard lock(dict_mu_);
  dictionary_of_[noted] = {object->id, 0};
  if (tier_dictionaries_.size() >= 16 * options_.dictionaries.max_known) tier_dictionaries_.clear();
  tier_dictionaries_[AsBytes(Sha256(plain->body))] = std::move(t);
}

bool Proxy::TierDictionaryNoted(const CachedObject& object) const {
  std::lock_guard lock(dict_mu_);
  auto it = dictionary_of_.find("tier\n" + object.meta.key);
  return it != dictionary_of_.end() && it->second.first == object.id;
}

ProxyResponse Proxy::ExportDictionary(const ProxyRequest& req) {
  if (!Allowed(options_.admin_allow, req.peer)) {
    return Simple(403, "forbidden: dictionaries go to addresses --admin-allow names",
                  CacheStatus::kBypass);
  }
  std::string_view path = std::string_view(req.target).substr(0, req.target.find('?'));
  std::optional<std::string> hash = FromHex(path.substr(kExportPath.size()));
  if (!hash)
    return Simple(400, "a dictionary is named by 64 lower-case hex digits", CacheStatus::kBypass);
  TierDictionary t;
  {
    std::lock_guard lock(dict_mu_);
    auto it = tier_dictionaries_.find(*hash);
    if (it != tier_dictionaries_.end()) t = it->second;
  }
  std::shared_ptr<const CachedObject> object;
  if (!t.key.empty() && t.host == AsciiLower(HeaderValue(req.headers, "host"))) {
    object = InMemory(t.key);
    if (!object) object = FromDisk(t.key);
  }
  // Still those bytes (a newer version under the key is another dictionary).
  if (object && object->id != t.id) {
    std::shared_ptr<const CachedObject> plain =
        DictionaryEligible(*object) ? DecodedCopy(*object) : nullptr;
    if (!plain || AsBytes(Sha256(plain->body)) != *hash) object = nullptr;
  }
  const std::chrono::seconds remaining =
      object ? object->lifetime - object->AgeAt(Now()) : std::chrono::seconds(0);
  if (!object || !DictionaryEligible(*object) || remaining <= std::chrono::seconds(0)) {
    return Simple(404, "no such dictionary", CacheStatus::kBypass);
  }
  ProxyResponse r;
  r.headers = {
      {"Content-Type", "application/octet-stream"},
      {"Content-Encoding", "zstd"},
      {std::string(kStoredHeader), "zstd; length=" + std::to_string(object->meta.logical_length)},
      {"Use-As-Dictionary", FormatUseAsDictionary(t.mark)},
      {"X-Ferry-Dictionary-Path", t.path},
      {"Cache-Control", "max-age=" + std::to_string(remaining.count())}};
  r.body = object->body;
  r.keep = std::move(object);
  return r;
}

std::optional<DictionaryInfo> Proxy::FetchDictionary(const ProxyRequest& req,
                                                     const std::string& origin,
                                                     const std::string& hash) {
  const std::string missed = origin + "\n" + hash;
  const int64_t now = UnixNow();
  {
    std::lock_guard lock(dict_mu_);
    auto it = parent_misses_.find(missed);
    if (it != parent_misses_.end() && it->second > now) return std::nullopt;
  }
  auto route = RouteRequest(options_.routing, HeaderValue(req.headers, "host"),
                            std::string(kExportPath) + HexLower(hash));
  if (!route.ok()) return std::nullopt;
  for (size_t k : ParentOrder(route->cache_key, parent_names_)) {
    bool reached = false;
    auto f = FetchFrom(&options_.parents[k], *route, "GET", {}, "", &reached);
    if (!f.ok() || f->response.status != 200 || f->spool) continue;
    const http::Headers& h = f->response.headers;
    std::string bytes = f->response.body;
    if (HeaderValue(h, std::string(kStoredHeader)).starts_with("zstd")) {
      auto decoded = codec::ZstdDecompress(bytes);
      if (!decoded.ok()) continue;
      bytes = std::move(decoded).value();
    }
    auto mark = ParseUseAsDictionary(HeaderValue(h, "use-as-dictionary"));
    CacheControl cc = ParseCacheControl(HeaderValue(h, "cache-control"));
    if (AsBytes(Sha256(bytes)) != hash || !mark.ok() || !cc.max_age) continue;
    std::string host = origin.substr(origin.find("://") + 3);
    auto pattern =
        ResolveMatch(mark->match, HeaderValue(h, "x-ferry-dictionary-path"), host, req.tls);
    if (!pattern) continue;
    DictionaryInfo info;
    std::copy(hash.begin(), hash.end(), info.hash.begin());
    info.host = host;
    info.tls = req.tls;
    info.pattern = *pattern;
    info.mark = *mark;
    info.expires = now + cc.max_age->count();
    if (!StoreDictionary(origin, info, StoredEncoding::kIdentity, bytes, bytes.size()))
      return std::nullopt;
    Remember(origin + "\n" + hash, info);
    counters_.dictionaries_kept++;
    return info;
  }
  std::lock_guard lock(dict_mu_);
  if (parent_misses_.size() >= options_.dictionaries.max_known) parent_misses_.clear();
  parent_misses_[missed] = now + kMissSeconds;
  return std::nullopt;
}

}  // namespace ferry::cache
