// Proxy's compression dictionaries (RFC 9842): which answers are marked
// and kept as dictionaries, and the dcz answers made against them.
//
// Stored beside the entries, under keys no request maps to:
//   "\ndict\n" + hex SHA-256     a dictionary: its bytes as the entry kept
//                                them (zstd or not), its mark, origin,
//                                resolved pattern and expiry in headers;
//   key + "\ndcz\n" + hex        a dcz answer for the entry `key`: the 40-byte
//                                header and the frame, and the version of
//                                the entry it was made from.
// Both are recomputable: written without a sync, evicted like entries.
#include <spdlog/spdlog.h>

#include <charconv>

#include "base/strings.h"
#include "cache/proxy_internal.h"
#include "codec/zstd_codec.h"
#include "codec/zstd_dictionary.h"

namespace ferry::cache {
namespace {

using namespace proxy_detail;  // NOLINT: the Proxy's own helpers

std::string DictionaryKey(const std::string& hash) { return "\ndict\n" + HexLower(hash); }

int64_t UnixNow() { return Now().time_since_epoch().count(); }

std::string_view PathOf(const ProxyRequest& req) {
  return std::string_view(req.target).substr(0, req.target.find('?'));
}

// What identifies the representation a dcz answer was made from.
std::string VersionOf(const EntryMeta& m) {
  std::string etag = HeaderValue(m.headers, "etag"),
              modified = HeaderValue(m.headers, "last-modified");
  std::string v = etag + "|" + modified + "|" + std::to_string(m.logical_length);
  if (etag.empty() && modified.empty()) v += "|" + std::to_string(m.response_time);
  return v;
}

// The request's view for DictionaryApplies (its strings outlive the view).
struct RequestFacts {
  std::string host, dest, id;
  DictionaryRequest View(const ProxyRequest& req) const {
    return DictionaryRequest{host, PathOf(req), dest, id, req.tls, UnixNow()};
  }
};

}  // namespace

std::optional<DictionaryMark> Proxy::MarkFor(const ProxyRequest& req, const CachedObject& object,
                                             bool tier, bool* configured) const {
  const DictionarySettings& ds = options_.dictionaries;
  const EntryMeta& m = object.meta;
  *configured = false;
  if (!ds.enabled || object.big || m.status != 200 || m.logical_length == 0 ||
      m.logical_length > ds.max_size) {
    return std::nullopt;
  }
  if (std::string origin = HeaderValue(m.headers, "use-as-dictionary"); !origin.empty()) {
    auto mark = ParseUseAsDictionary(origin);
    if (!mark.ok()) return std::nullopt;
    return *mark;
  }
  // ferry's own marks: text it compressed, in a secure context.
  if ((ds.match.empty() && !ds.versioned) || m.encoding != StoredEncoding::kZstd)
    return std::nullopt;
  if (!tier && !SecureContext(req.tls, HeaderValue(req.headers, "host"))) return std::nullopt;
  std::string_view path = PathOf(req);
  DictionaryMark mark;
  for (const std::string& rule : ds.match) {
    if (PathMatches(rule, path)) mark.match = rule;
    if (!mark.match.empty()) break;
  }
  if (mark.match.empty() && ds.versioned) mark.match = VersionedPattern(path).value_or("");
  if (mark.match.empty()) return std::nullopt;
  *configured = true;
  return mark;
}

void Proxy::MarkDictionary(const ProxyRequest& req,
                           const std::shared_ptr<const CachedObject>& object, bool tier,
                           ProxyResponse* r) {
  bool configured = false;
  std::optional<DictionaryMark> mark = MarkFor(req, *object, tier, &configured);
  if (!mark) return;
  if (configured) SetHeader(&r->headers, "Use-As-Dictionary", FormatUseAsDictionary(*mark));
  // Kept by the hop that faces the client, for a client that may use it.
  if (tier || !SecureContext(req.tls, HeaderValue(req.headers, "host"))) return;
  KeepDictionary(req, object, *mark);
}

void Proxy::KeepDictionary(const ProxyRequest& req,
                           const std::shared_ptr<const CachedObject>& object,
                           const DictionaryMark& mark) {
  const SysSeconds now = Now();
  const std::chrono::seconds remaining = object->lifetime - object->AgeAt(now);
  if (remaining <= std::chrono::seconds(0)) return;  // a client would not keep it either
  const int64_t expires = (now + remaining).time_since_epoch().count();
  {
    std::lock_guard lock(dict_mu_);
    auto it = dictionary_of_.find(object->meta.key);
    // Kept already, with at least half the lifetime it would get now.
    if (it != dictionary_of_.end() && it->second.first == object->id &&
        it->second.second >= expires - remaining.count() / 2) {
      return;
    }
  }
  const std::string host = AsciiLower(HeaderValue(req.headers, "host"));
  std::optional<std::string> pattern = ResolveMatch(mark.match, PathOf(req), host, req.tls);
  if (!pattern || mark.type != "raw") return;
  std::shared_ptr<const CachedObject> plain =
      object->meta.encoding != StoredEncoding::kIdentity ? DecodedCopy(*object) : object;
  if (!plain) return;
  DictionaryInfo info;
  info.hash = Sha256(plain->body);
  info.host = host;
  info.tls = req.tls;
  info.pattern = *pattern;
  info.mark = mark;
  info.expires = expires;
  const std::string hash = AsBytes(info.hash);
  EntryMeta meta;
  meta.key = DictionaryKey(hash);
  meta.headers = {{"use-as-dictionary", FormatUseAsDictionary(mark)},
                  {"x-ferry-origin", (req.tls ? "https://" : "http://") + host},
                  {"x-ferry-pattern", *pattern},
                  {"x-ferry-expires", std::to_string(expires)}};
  meta.encoding = object->meta.encoding;
  meta.logical_length = object->meta.logical_length;
  meta.request_time = meta.response_time = now.time_since_epoch().count();
  Status st = store_->Put(meta, object->body, /*sync=*/false);
  if (!st.ok())
    spdlog::warn("cache: a dictionary was not stored (kept in memory): {}", st.ToString());
  bool known;
  {
    std::lock_guard lock(dict_mu_);
    known = dictionaries_.count(hash) > 0;
    dictionary_of_[object->meta.key] = {object->id, expires};
    if (dictionary_of_.size() > options_.dictionaries.max_known)
      dictionary_of_.erase(dictionary_of_.begin());
  }
  Remember(std::move(info));
  if (!known) counters_.dictionaries_kept++;
}

void Proxy::Remember(DictionaryInfo info) {
  std::lock_guard lock(dict_mu_);
  const int64_t now = UnixNow();
  if (dictionaries_.size() >= options_.dictionaries.max_known) {
    std::erase_if(dictionaries_, [&](const auto& kv) { return kv.second.expires <= now; });
    // Still full: one goes (it stays on disk, found there when asked for).
    if (dictionaries_.size() >= options_.dictionaries.max_known)
      dictionaries_.erase(dictionaries_.begin());
  }
  std::string hash = AsBytes(info.hash);
  dictionaries_[hash] = std::move(info);
}

std::optional<DictionaryInfo> Proxy::KnownDictionary(const std::string& hash) {
  {
    std::lock_guard lock(dict_mu_);
    auto it = dictionaries_.find(hash);
    if (it != dictionaries_.end()) return it->second;
  }
  auto got = store_->Get(DictionaryKey(hash));
  if (!got.ok() || !*got) return std::nullopt;
  const EntryMeta& m = (*got)->meta;
  auto mark = ParseUseAsDictionary(HeaderValue(m.headers, "use-as-dictionary"));
  std::string origin = HeaderValue(m.headers, "x-ferry-origin");
  std::string expires_text = HeaderValue(m.headers, "x-ferry-expires");
  int64_t expires = 0;
  auto [end, ec] =
      std::from_chars(expires_text.data(), expires_text.data() + expires_text.size(), expires);
  if (!mark.ok() || ec != std::errc() || end != expires_text.data() + expires_text.size())
    return std::nullopt;
  DictionaryInfo info;
  std::copy(hash.begin(), hash.end(), info.hash.begin());
  info.tls = origin.starts_with("https://");
  info.host = origin.substr(origin.find("://") + 3);
  info.pattern = HeaderValue(m.headers, "x-ferry-pattern");
  info.mark = *mark;
  info.expires = expires;
  Remember(info);
  return info;
}

bool Proxy::DictionaryWork(const ProxyRequest& req, const CachedObject& object) {
  if (!options_.dictionaries.enabled || object.big || object.meta.status != 200) return false;
  if (HeaderValue(req.headers, kTierHeader) == "stored") return false;
  bool configured = false;
  if (MarkFor(req, object, false, &configured)) {
    std::lock_guard lock(dict_mu_);
    auto it = dictionary_of_.find(object.meta.key);
    if (it == dictionary_of_.end() || it->second.first != object.id) return true;
  }
  std::string ad = HeaderValue(req.headers, "available-dictionary");
  if (ad.empty() || !HeaderValue(req.headers, "range").empty()) return false;
  auto hash = ParseAvailableDictionary(ad);
  if (!hash) return false;
  auto made = decoded_.Get(object.meta.key + "\ndcz\n" + HexLower(*hash));
  return !made || made->id != object.id;
}

std::shared_ptr<const CachedObject> Proxy::DczVariant(
    const ProxyRequest& req, const std::shared_ptr<const CachedObject>& object, uint64_t ordinary,
    bool* vary_id) {
  *vary_id = false;
  if (!options_.dictionaries.enabled || object->big || object->meta.status != 200) return nullptr;
  if (!AcceptsCoding(HeaderValue(req.headers, "accept-encoding"), "dcz")) return nullptr;
  RequestFacts facts{HeaderValue(req.headers, "host"), HeaderValue(req.headers, "sec-fetch-dest"),
                     ParseDictionaryId(HeaderValue(req.headers, "dictionary-id")).value_or("")};
  if (!SecureContext(req.tls, facts.host)) return nullptr;
  auto hash = ParseAvailableDictionary(HeaderValue(req.headers, "available-dictionary"));
  std::optional<DictionaryInfo> dict = hash ? KnownDictionary(AsBytes(*hash)) : std::nullopt;
  if (!dict || !DictionaryApplies(*dict, facts.View(req))) {
    counters_.dictionary_misses++;
    return nullptr;
  }
  *vary_id = !dict->mark.id.empty();
  const std::string key = object->meta.key + "\ndcz\n" + HexLower(*hash);
  std::shared_ptr<const CachedObject> made = decoded_.Get(key);
  if (!made || made->id != object->id) {
    made = dcz_flights_
               .Do(key + "\n" + std::to_string(object->id),
                   [&] { return MakeDcz(object, *dict, key); })
               .first;
  }
  if (!made || made->body.size() >= ordinary) return nullptr;
  return made;
}

std::shared_ptr<const CachedObject> Proxy::MakeDcz(
    const std::shared_ptr<const CachedObject>& object, const DictionaryInfo& dict,
    const std::string& key) {
  const std::string version = VersionOf(object->meta);
  auto kept = [&](EntryMeta meta, std::string body) {
    auto v = std::make_shared<CachedObject>();
    v->meta = std::move(meta);
    v->body = std::move(body);
    v->id = object->id;
    decoded_.Put(v);
    return std::shared_ptr<const CachedObject>(std::move(v));
  };
  // Made before (by this process or an earlier one) for this version.
  if (auto got = store_->Get(key);
      got.ok() && *got && HeaderValue((*got)->meta.headers, "x-ferry-version") == version) {
    return kept(std::move((*got)->meta), std::move((*got)->body));
  }
  // The dictionary's bytes, checked against its hash.
  const std::string dict_key = DictionaryKey(AsBytes(dict.hash));
  std::shared_ptr<const CachedObject> bytes = decoded_.Get(dict_key);
  if (!bytes) {
    auto got = store_->Get(dict_key);
    if (!got.ok() || !*got) return nullptr;
    std::string plain = std::move((*got)->body);
    if ((*got)->meta.encoding == StoredEncoding::kZstd) {
      auto decoded = codec::ZstdDecompress(plain);
      if (!decoded.ok()) return nullptr;
      plain = std::move(decoded).value();
    }
    if (Sha256(plain) != dict.hash) {
      spdlog::warn("cache: a stored dictionary does not match its hash; removed");
      (void)store_->Remove(dict_key);
      return nullptr;
    }
    auto copy = std::make_shared<CachedObject>();
    copy->meta.key = dict_key;
    copy->body = std::move(plain);
    decoded_.Put(copy);
    bytes = std::move(copy);
  }
  std::shared_ptr<const CachedObject> plain =
      object->meta.encoding != StoredEncoding::kIdentity ? DecodedCopy(*object) : object;
  if (!plain) return nullptr;
  const uint64_t cpu_start = ThreadCpuNanos();
  auto frame = codec::ZstdCompressWithPrefix(plain->body, bytes->body, options_.dictionaries.level);
  if (!frame.ok()) {
    spdlog::warn("cache: a dcz answer failed: {}", frame.status().ToString());
    return nullptr;
  }
  auto i = static_cast<size_t>(Coding::kDcz);
  counters_.coding_encode_ns[i] += ThreadCpuNanos() - cpu_start;
  counters_.coding_encode_bytes[i] += plain->body.size();
  std::string body = DczHeader(dict.hash) + *frame;
  EntryMeta meta;
  meta.key = key;
  meta.headers = {{"x-ferry-version", version}};
  meta.logical_length = body.size();
  meta.request_time = meta.response_time = Now().time_since_epoch().count();
  (void)store_->Put(meta, body, /*sync=*/false);  // recomputable: kept when the store takes it
  return kept(std::move(meta), std::move(body));
}

}  // namespace ferry::cache
