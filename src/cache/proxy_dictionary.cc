// Proxy's compression dictionaries (RFC 9842): which answers are marked
// and kept as dictionaries, and the dcz answers made against them.
//
// Only shared answers take part (stored or storable, not private, the
// cache's own zstd at rest: text it may transform), asked for in origin
// form. A dictionary belongs to the origin its client saw (scheme and
// Host): the same bytes under two origins are two dictionaries.
//
// Stored beside the entries, under keys no request maps to:
//   "\ndict\n" + hex SHA-256 + "\n" + origin
//                                a dictionary: its bytes as the entry kept
//                                them, its mark, resolved pattern and
//                                expiry in headers;
//   key + "\ndcz\n" + hex        a dcz answer for the entry `key`: the 40-byte
//                                header and the frame, and the checksum of
//                                the stored body it was made from.
// Both are recomputable: written without a sync, evicted like entries.
//
// On the event loop (may_block false) only memory is used: a dictionary
// to keep or a dcz answer to make sends the request to a worker
// (DictionaryWork).
#include <spdlog/spdlog.h>

#include <charconv>

#include "base/strings.h"
#include "cache/checksum.h"
#include "cache/proxy_internal.h"
#include "codec/zstd_codec.h"
#include "codec/zstd_dictionary.h"

namespace ferry::cache {
namespace {

using namespace proxy_detail;  // NOLINT: the Proxy's own helpers

std::string_view PathOf(const ProxyRequest& req) {
  return std::string_view(req.target).substr(0, req.target.find('?'));
}

// The origin a client saw ("https://host:port"), or "" for a request in
// absolute form or without a Host.
std::string OriginOf(const ProxyRequest& req) {
  std::string host = AsciiLower(HeaderValue(req.headers, "host"));
  if (host.empty() || req.target.empty() || req.target[0] != '/') return "";
  return (req.tls ? "https://" : "http://") + host;
}
std::string HostOf(const std::string& origin) { return origin.substr(origin.find("://") + 3); }

// The memory key of a dictionary, and its store key.
std::string Known(const std::string& origin, const std::string& hash) {
  return origin + "\n" + hash;
}
std::string StoreKey(const std::string& origin, const std::string& hash) {
  return "\ndict\n" + HexLower(hash) + "\n" + origin;
}

// What identifies the stored representation a dcz answer was made from.
std::string VersionOf(const CachedObject& o) {
  return std::to_string(FormatSum8(o.body)) + "|" + std::to_string(o.meta.logical_length);
}

// The zstd level of a dcz answer: the configured one, at most 9 past 1 MiB
// (level 19 there costs seconds and a large window's memory).
int DczLevel(int configured, uint64_t size) {
  return size > (1u << 20) ? std::min(configured, 9) : configured;
}

}  // namespace

bool Proxy::DictionaryEligible(const CachedObject& object) const {
  const EntryMeta& m = object.meta;
  return options_.dictionaries.enabled && object.shareable && !object.big && m.status == 200 &&
         m.encoding == StoredEncoding::kZstd && !object.cache_control.no_store &&
         !object.cache_control.private_ && m.logical_length > 0 &&
         m.logical_length <= options_.dictionaries.max_size;
}

std::optional<DictionaryMark> Proxy::MarkFor(const ProxyRequest& req, const CachedObject& object,
                                             bool tier, bool* configured) const {
  const DictionarySettings& ds = options_.dictionaries;
  *configured = false;
  if (!DictionaryEligible(object)) return std::nullopt;
  if (std::string origin = HeaderValue(object.meta.headers, "use-as-dictionary"); !origin.empty()) {
    auto mark = ParseUseAsDictionary(origin);
    if (!mark.ok()) return std::nullopt;
    return *mark;
  }
  // ferry's own marks, in a secure context.
  if (ds.match.empty() && !ds.versioned) return std::nullopt;
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

std::optional<DictionaryInfo> Proxy::Keepable(const ProxyRequest& req, const CachedObject& object,
                                              const DictionaryMark& mark) const {
  const std::string origin = OriginOf(req);
  if (origin.empty() || mark.type != "raw" || !SecureContext(req.tls, HostOf(origin)))
    return std::nullopt;
  const SysSeconds now = Now();
  const std::chrono::seconds remaining = object.lifetime - object.AgeAt(now);
  if (remaining <= std::chrono::seconds(0))
    return std::nullopt;  // a client would not keep it either
  std::optional<std::string> pattern =
      ResolveMatch(mark.match, PathOf(req), HostOf(origin), req.tls);
  if (!pattern) return std::nullopt;
  DictionaryInfo info;
  info.host = HostOf(origin);
  info.tls = req.tls;
  info.pattern = *pattern;
  info.mark = mark;
  info.expires = (now + remaining).time_since_epoch().count();
  return info;
}

bool Proxy::KeptAlready(const std::string& key, uint64_t id, int64_t expires, int64_t now) const {
  std::lock_guard lock(dict_mu_);
  auto it = dictionary_of_.find(key);
  // Kept for this version with at least half the lifetime it would get now.
  return it != dictionary_of_.end() && it->second.first == id &&
         it->second.second - now >= (expires - now) / 2;
}

void Proxy::MarkDictionary(const ProxyRequest& req,
                           const std::shared_ptr<const CachedObject>& object, bool tier,
                           bool may_block, ProxyResponse* r) {
  bool configured = false;
  std::optional<DictionaryMark> mark = MarkFor(req, *object, tier, &configured);
  if (!mark) return;
  if (configured) SetHeader(&r->headers, "Use-As-Dictionary", FormatUseAsDictionary(*mark));
  // Kept by the hop that faces the client; a parent notes it for its lower
  // tiers; on a worker (DictionaryWork).
  if (!may_block) return;
  if (tier) {
    NoteTierDictionary(req, object, *mark);
    return;
  }
  std::optional<DictionaryInfo> info = Keepable(req, *object, *mark);
  if (!info ||
      KeptAlready(OriginOf(req) + "\n" + object->meta.key, object->id, info->expires, UnixNow()))
    return;
  KeepDictionary(OriginOf(req), object, std::move(*info));
}

void Proxy::KeepDictionary(const std::string& origin,
                           const std::shared_ptr<const CachedObject>& object, DictionaryInfo info) {
  std::shared_ptr<const CachedObject> plain = DecodedCopy(*object);
  if (!plain) return;
  info.hash = Sha256(plain->body);
  const std::string hash = AsBytes(info.hash);
  const int64_t now = UnixNow();
  // The same bytes kept already for this origin, long enough: nothing to write.
  std::optional<DictionaryInfo> known = KnownDictionary(origin, hash, true);
  if (!known || known->expires - now < (info.expires - now) / 2) {
    if (!StoreDictionary(origin, info, object->meta.encoding, object->body,
                         object->meta.logical_length))
      return;
  }
  {
    std::lock_guard lock(dict_mu_);
    dictionary_of_[origin + "\n" + object->meta.key] = {object->id, info.expires};
    if (dictionary_of_.size() > 16 * options_.dictionaries.max_known)
      dictionary_of_.erase(dictionary_of_.begin());
  }
  if (Remember(Known(origin, hash), std::move(info))) counters_.dictionaries_kept++;
}

bool Proxy::StoreDictionary(const std::string& origin, const DictionaryInfo& info,
                            StoredEncoding encoding, const std::string& body,
                            uint64_t logical_length) {
  EntryMeta meta;
  meta.key = StoreKey(origin, AsBytes(info.hash));
  meta.headers = {{"use-as-dictionary", FormatUseAsDictionary(info.mark)},
                  {"x-ferry-pattern", info.pattern},
                  {"x-ferry-expires", std::to_string(info.expires)}};
  meta.encoding = encoding;
  meta.logical_length = logical_length;
  meta.request_time = meta.response_time = UnixNow();
  Status st = store_->Put(meta, body, /*sync=*/false);
  if (!st.ok()) spdlog::warn("cache: a dictionary was not stored, so not kept: {}", st.ToString());
  return st.ok();  // its bytes are needed later: not kept at all
}

bool Proxy::Remember(const std::string& known, DictionaryInfo info) {
  std::lock_guard lock(dict_mu_);
  auto it = dictionaries_.find(known);
  if (it != dictionaries_.end()) {
    it->second.expires = std::max(it->second.expires, info.expires);
    return false;
  }
  const int64_t now = UnixNow();
  if (dictionaries_.size() >= options_.dictionaries.max_known) {
    std::erase_if(dictionaries_, [&](const auto& kv) { return kv.second.expires <= now; });
    // Still full: one goes (it stays on disk, found there when asked for).
    if (dictionaries_.size() >= options_.dictionaries.max_known)
      dictionaries_.erase(dictionaries_.begin());
  }
  dictionaries_.emplace(known, std::move(info));
  return true;
}

std::optional<DictionaryInfo> Proxy::KnownDictionary(const std::string& origin,
                                                     const std::string& hash, bool may_block) {
  {
    std::lock_guard lock(dict_mu_);
    auto it = dictionaries_.find(Known(origin, hash));
    if (it != dictionaries_.end()) return it->second;
  }
  if (!may_block) return std::nullopt;
  auto got = store_->Get(StoreKey(origin, hash));
  if (!got.ok() || !*got) return std::nullopt;
  const EntryMeta& m = (*got)->meta;
  auto mark = ParseUseAsDictionary(HeaderValue(m.headers, "use-as-dictionary"));
  std::string expires_text = HeaderValue(m.headers, "x-ferry-expires");
  int64_t expires = 0;
  auto [end, ec] =
      std::from_chars(expires_text.data(), expires_text.data() + expires_text.size(), expires);
  if (!mark.ok() || ec != std::errc() || end != expires_text.data() + expires_text.size())
    return std::nullopt;
  DictionaryInfo info;
  std::copy(hash.begin(), hash.end(), info.hash.begin());
  info.tls = origin.starts_with("https://");
  info.host = HostOf(origin);
  info.pattern = HeaderValue(m.headers, "x-ferry-pattern");
  info.mark = *mark;
  info.expires = expires;
  Remember(Known(origin, hash), info);
  return info;
}

// The dictionary a request names, when it applies to its target (memory
// only when !may_block); counts a miss.
std::optional<DictionaryInfo> Proxy::DictionaryFor(const ProxyRequest& req, bool may_block) {
  const std::string origin = OriginOf(req);
  auto hash = ParseAvailableDictionary(HeaderValue(req.headers, "available-dictionary"));
  if (origin.empty() || !hash || !SecureContext(req.tls, HostOf(origin))) return std::nullopt;
  std::optional<DictionaryInfo> dict = KnownDictionary(origin, AsBytes(*hash), may_block);
  if (!dict && may_block && !options_.parents.empty())
    dict = FetchDictionary(req, origin, AsBytes(*hash));
  const std::string dest = HeaderValue(req.headers, "sec-fetch-dest");
  const std::string id = ParseDictionaryId(HeaderValue(req.headers, "dictionary-id")).value_or("");
  const std::string host = HostOf(origin);
  if (dict && DictionaryApplies(
                  *dict, DictionaryRequest{host, PathOf(req), dest, id, req.tls, UnixNow()})) {
    return dict;
  }
  if (may_block) counters_.dictionary_misses++;
  return std::nullopt;
}

bool Proxy::DictionaryWork(const ProxyRequest& req, const CachedObject& object) {
  if (!DictionaryEligible(object)) return false;
  bool configured = false;
  if (HeaderValue(req.headers, kTierHeader) == "stored") {
    return MarkFor(req, object, true, &configured) && !TierDictionaryNoted(object);
  }
  if (std::optional<DictionaryMark> mark = MarkFor(req, object, false, &configured)) {
    std::optional<DictionaryInfo> info = Keepable(req, object, *mark);
    if (info &&
        !KeptAlready(OriginOf(req) + "\n" + object.meta.key, object.id, info->expires, UnixNow())) {
      return true;
    }
  }
  if (HeaderValue(req.headers, "available-dictionary").empty() ||
      !HeaderValue(req.headers, "range").empty() ||
      !AcceptsCoding(HeaderValue(req.headers, "accept-encoding"), "dcz")) {
    return false;
  }
  std::optional<DictionaryInfo> dict = DictionaryFor(req, false);
  if (!dict) return true;  // on disk, or a miss to count: a worker looks
  auto made = decoded_.Get(object.meta.key + "\ndcz\n" + HexLower(dict->hash));
  return !made || made->id != object.id;
}

std::shared_ptr<const CachedObject> Proxy::DczVariant(
    const ProxyRequest& req, const std::shared_ptr<const CachedObject>& object, uint64_t ordinary,
    bool may_block, DictionaryInfo* used) {
  if (!DictionaryEligible(*object)) return nullptr;
  if (!AcceptsCoding(HeaderValue(req.headers, "accept-encoding"), "dcz")) return nullptr;
  std::optional<DictionaryInfo> dict = DictionaryFor(req, may_block);
  if (!dict) return nullptr;
  const std::string key = object->meta.key + "\ndcz\n" + HexLower(dict->hash);
  std::shared_ptr<const CachedObject> made = decoded_.Get(key);
  if ((!made || made->id != object->id) && may_block) {
    made = dcz_flights_
               .Do(key + "\n" + std::to_string(object->id),
                   [&] { return MakeDcz(object, *dict, key); })
               .first;
  }
  if (!made || made->id != object->id || made->body.size() >= ordinary) return nullptr;
  *used = std::move(*dict);
  return made;
}

std::shared_ptr<const CachedObject> Proxy::DictionaryBytes(const std::string& origin,
                                                           const DictionaryInfo& dict) {
  const std::string store_key = StoreKey(origin, AsBytes(dict.hash));
  if (auto bytes = decoded_.Get(store_key)) return bytes;
  auto got = store_->Get(store_key);
  if (!got.ok() || !*got) return nullptr;
  std::string plain = std::move((*got)->body);
  if ((*got)->meta.encoding == StoredEncoding::kZstd) {
    auto decoded = codec::ZstdDecompress(plain);
    if (!decoded.ok()) return nullptr;
    plain = std::move(decoded).value();
  }
  if (Sha256(plain) != dict.hash) {
    spdlog::warn("cache: a stored dictionary does not match its hash; removed");
    (void)store_->Remove(store_key);
    return nullptr;
  }
  auto copy = std::make_shared<CachedObject>();
  copy->meta.key = store_key;
  copy->body = std::move(plain);
  decoded_.Put(copy);
  return copy;
}

std::shared_ptr<const CachedObject> Proxy::MakeDcz(
    const std::shared_ptr<const CachedObject>& object, const DictionaryInfo& dict,
    const std::string& key) {
  const std::string version = VersionOf(*object);
  auto kept = [&](EntryMeta meta, std::string body) {
    auto v = std::make_shared<CachedObject>();
    v->meta = std::move(meta);
    v->body = std::move(body);
    v->id = object->id;
    decoded_.Put(v);
    return std::shared_ptr<const CachedObject>(std::move(v));
  };
  // Made before (by this process or an earlier one) from these stored bytes.
  if (auto got = store_->Get(key);
      got.ok() && *got && HeaderValue((*got)->meta.headers, "x-ferry-version") == version &&
      (*got)->body.size() > kDczHeaderSize) {
    return kept(std::move((*got)->meta), std::move((*got)->body));
  }
  std::shared_ptr<const CachedObject> bytes =
      DictionaryBytes((dict.tls ? "https://" : "http://") + dict.host, dict);
  std::shared_ptr<const CachedObject> plain = DecodedCopy(*object);
  if (!bytes || !plain) return nullptr;
  const uint64_t cpu_start = ThreadCpuNanos();
  auto frame = codec::ZstdCompressWithPrefix(
      plain->body, bytes->body, DczLevel(options_.dictionaries.level, plain->body.size()));
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
  meta.request_time = meta.response_time = UnixNow();
  (void)store_->Put(meta, body, /*sync=*/false);  // recomputable: kept when the store takes it
  return kept(std::move(meta), std::move(body));
}

}  // namespace ferry::cache
