#include "cache/fill.h"

#include <charconv>

#include "base/strings.h"
#include "codec/zstd_codec.h"
#include "http/date.h"

namespace ferry::cache {
namespace {

using http::HeaderValue;
using http::RemoveHeader;

std::optional<SysSeconds> DateHeader(const http::Headers& h, std::string_view name) {
  std::string v = HeaderValue(h, name);
  if (v.empty()) return std::nullopt;
  return http::ParseHttpDate(v);
}

}  // namespace

http::Headers UpstreamRequestHeaders(const http::Headers& client, const EntryMeta* stale) {
  http::Headers out = http::EndToEnd(client);
  // The cache answers content codings itself, dictionaries included
  // (RFC 9842): the origin is asked for the one representation it stores.
  for (const char* h : {"accept-encoding", "if-none-match", "if-modified-since", "range", "if-range",
                        "available-dictionary", "dictionary-id"}) {
    RemoveHeader(&out, h);
  }
  if (stale) {
    std::string etag = HeaderValue(stale->headers, "etag");
    std::string lm = HeaderValue(stale->headers, "last-modified");
    if (!etag.empty()) out.emplace_back("If-None-Match", etag);
    if (!lm.empty()) out.emplace_back("If-Modified-Since", lm);
  }
  return out;
}

CachedObject MergeNotModified(const CachedObject& stale, const http::Headers& not_modified,
                              int64_t request_time, int64_t response_time) {
  CachedObject updated = stale;
  for (const auto& [k, v] : http::EndToEnd(not_modified)) {
    if (!EqualsIgnoreCase(k, "content-encoding") && !EqualsIgnoreCase(k, "content-type") &&
        !EqualsIgnoreCase(k, kStoredHeader)) {
      http::SetHeader(&updated.meta.headers, k, v);
    }
  }
  updated.meta.request_time = request_time;
  updated.meta.response_time = response_time;
  return updated;
}

Result<CachedObject> ObjectFromResponse(std::string key, int status, const http::Headers& headers,
                                        std::string body, int64_t request_time, int64_t response_time) {
  CachedObject object;
  EntryMeta& m = object.meta;
  m.key = std::move(key);
  m.status = status;
  m.headers = http::EndToEnd(headers);
  m.logical_length = body.size();
  m.request_time = request_time;
  m.response_time = response_time;
  std::string marker = HeaderValue(headers, kStoredHeader);
  RemoveHeader(&m.headers, kStoredHeader);
  if (!marker.empty()) {
    // From the parent tier: its stored zstd bytes, kept as they are.
    auto length = ParseStoredMarker(marker);
    if (!length || codec::ZstdFrameContentSize(body) != length) {
      return Status(ErrorCode::kProtocol,
                    "parent tier: a body that does not match its " + std::string(kStoredHeader) + " marker");
    }
    RemoveHeader(&m.headers, "content-encoding");
    m.encoding = StoredEncoding::kZstd;
    m.logical_length = *length;
  }
  object.body = std::move(body);
  m.stored_length = object.body.size();
  return object;
}

bool MayStore(const http::Headers& request, const CacheControl& request_cc, const EntryMeta& m,
              const CacheSettings& settings) {
  StoreFacts facts;
  facts.method = "GET";
  facts.request = request_cc;
  facts.authorization = !HeaderValue(request, "authorization").empty();
  facts.status = m.status;
  facts.response = ParseCacheControl(HeaderValue(m.headers, "cache-control"));
  facts.has_expires = !HeaderValue(m.headers, "expires").empty();
  facts.has_last_modified = DateHeader(m.headers, "last-modified").has_value();
  facts.has_validator = !HeaderValue(m.headers, "etag").empty() || facts.has_last_modified;
  facts.set_cookie = !HeaderValue(m.headers, "set-cookie").empty();
  facts.vary = HeaderValue(m.headers, "vary");
  return DecideStore(facts, settings).store && m.status >= 200 && m.status < 300;
}

bool ShouldCompress(const EntryMeta& m, uint64_t body_size, const TranscodeSettings& settings) {
  if (m.encoding != StoredEncoding::kIdentity) return false;
  ResponseFacts rf;
  rf.status = m.status;
  rf.content_encoding = HeaderValue(m.headers, "content-encoding");
  rf.content_type = HeaderValue(m.headers, "content-type");
  rf.content_length = body_size;
  rf.cache_control = HeaderValue(m.headers, "cache-control");
  return DecideTranscode(rf, settings).action == Transcode::kZstd;
}

bool MayServeStale(const CachedObject& stale) {
  return !stale.cache_control.must_revalidate && !stale.cache_control.no_cache;
}

void Prepare(CachedObject* o, const CacheSettings& s) {
  const EntryMeta& m = o->meta;
  o->id = NextObjectId();
  o->cache_control = ParseCacheControl(HeaderValue(m.headers, "cache-control"));
  bool has_expires = !HeaderValue(m.headers, "expires").empty();
  SysSeconds resp(Seconds(m.response_time)), req(Seconds(m.request_time));
  auto date = DateHeader(m.headers, "date");
  o->last_modified = DateHeader(m.headers, "last-modified");
  Freshness f = FreshnessLifetime(o->cache_control, DateHeader(m.headers, "expires"), has_expires, date,
                                  o->last_modified, resp, s);
  o->lifetime = f.lifetime;
  o->heuristic = f.heuristic;
  o->initial_age = CurrentAge(ParseAge(HeaderValue(m.headers, "age")), date, req, resp, resp);
}

std::optional<uint64_t> ParseStoredMarker(std::string_view v) {
  v = TrimOws(v);
  constexpr std::string_view kPrefix = "zstd; length=";
  if (v.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  std::string_view n = v.substr(kPrefix.size());
  uint64_t out = 0;
  auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), out);
  if (ec != std::errc() || p != n.data() + n.size()) return std::nullopt;
  return out;
}

}  // namespace ferry::cache
