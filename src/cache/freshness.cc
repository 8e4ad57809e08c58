#include "cache/freshness.h"

#include <algorithm>
#include <charconv>

#include "base/strings.h"

namespace ferry::cache {
namespace {

// delta-seconds (RFC 9111 1.2.2): digits; values too large saturate at
// 2^31 (the RFC's advice). A quoted value is accepted, as caches do.
std::optional<Seconds> DeltaSeconds(std::string_view v) {
  v = TrimOws(v);
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  if (v.empty()) return std::nullopt;
  uint64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return std::nullopt;
    n = std::min<uint64_t>(n * 10 + static_cast<uint64_t>(c - '0'), uint64_t{1} << 31);
  }
  return Seconds(static_cast<int64_t>(n));
}

bool HeuristicallyCacheable(int status) {
  switch (status) {
    case 200: case 203: case 204: case 300: case 301: case 308:
    case 404: case 405: case 410: case 414: case 501:
      return true;
    default:
      return false;
  }
}

}  // namespace

CacheControl ParseCacheControl(std::string_view value) {
  CacheControl cc;
  while (!value.empty()) {
    size_t comma = value.find(',');
    std::string_view item = TrimOws(value.substr(0, comma));
    size_t eq = item.find('=');
    std::string name = AsciiLower(TrimOws(item.substr(0, eq)));
    std::string_view arg = eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
    if (name == "no-store") {
      cc.no_store = true;
    } else if (name == "no-cache") {
      cc.no_cache = true;  // with a field list it still means "revalidate" here
    } else if (name == "private") {
      cc.private_ = true;
    } else if (name == "public") {
      cc.public_ = true;
    } else if (name == "must-revalidate" || name == "proxy-revalidate") {
      cc.must_revalidate = true;
    } else if (name == "no-transform") {
      cc.no_transform = true;
    } else if (name == "only-if-cached") {
      cc.only_if_cached = true;
    } else if (name == "max-age") {
      cc.max_age = DeltaSeconds(arg);
      cc.max_age_invalid = !cc.max_age;
    } else if (name == "s-maxage") {
      cc.s_maxage = DeltaSeconds(arg);
    }
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return cc;
}

StoreDecision DecideStore(const StoreFacts& f, const CacheSettings& s) {
  auto no = [](const char* why) { return StoreDecision{false, why}; };
  if (f.method != "GET") return no("method");
  if (f.request.no_store || f.response.no_store) return no("no-store");
  if (f.response.private_) return no("private");
  if (f.authorization && !f.response.public_ && !f.response.s_maxage &&
      !f.response.must_revalidate) {
    return no("authorization");
  }
  if (f.status == 206) return no("partial content");
  if (f.status < 200 || f.status >= 600) return no("not a final status");
  // One stored object serves every client, so it may vary only on what
  // the cache answers itself: Accept-Encoding, and the dictionaries of
  // RFC 9842 (which it does not send upstream).
  for (std::string_view rest = f.vary; !rest.empty();) {
    size_t comma = rest.find(',');
    std::string_view member = TrimOws(rest.substr(0, comma));
    if (member == "*") return no("vary *");
    if (!member.empty() && !EqualsIgnoreCase(member, "accept-encoding") &&
        !EqualsIgnoreCase(member, "available-dictionary") && !EqualsIgnoreCase(member, "dictionary-id")) {
      return no("varies on a request field");
    }
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  if (f.set_cookie) return no("set-cookie");
  bool explicit_freshness = f.response.max_age || f.response.s_maxage || f.has_expires ||
                            f.response.max_age_invalid;
  if (explicit_freshness || f.response.public_) return {true, "explicit freshness"};
  if (f.response.no_cache && f.has_validator) return {true, "stored to revalidate"};
  if (!HeuristicallyCacheable(f.status)) return no("status needs explicit freshness");
  if (f.has_last_modified && s.heuristic_fraction > 0) return {true, "heuristic freshness"};
  if (s.default_ttl <= Seconds(0)) return no("no freshness and no default ttl");
  return {true, "default ttl"};
}

Freshness FreshnessLifetime(const CacheControl& r, std::optional<SysSeconds> expires,
                            bool has_expires, std::optional<SysSeconds> date,
                            std::optional<SysSeconds> last_modified, SysSeconds response_time,
                            const CacheSettings& s) {
  if (r.no_cache) return {};
  if (r.s_maxage) return {*r.s_maxage};
  if (r.max_age_invalid) return {};
  if (r.max_age) return {*r.max_age};
  if (has_expires) {
    if (!expires) return {};  // "0", "-1", garbage: already expired
    return {std::max(Seconds(0), *expires - date.value_or(response_time))};
  }
  if (last_modified && s.heuristic_fraction > 0) {
    Seconds since = std::max(Seconds(0), date.value_or(response_time) - *last_modified);
    auto lifetime = Seconds(static_cast<int64_t>(static_cast<double>(since.count()) * s.heuristic_fraction));
    return {std::min(lifetime, s.max_heuristic), true};
  }
  return {s.default_ttl};
}

Seconds CurrentAge(std::optional<Seconds> age_header, std::optional<SysSeconds> date,
                   SysSeconds request_time, SysSeconds response_time, SysSeconds now) {
  Seconds apparent = std::max(Seconds(0), response_time - date.value_or(response_time));
  Seconds delay = std::max(Seconds(0), response_time - request_time);
  Seconds corrected_age = age_header.value_or(Seconds(0)) + delay;
  Seconds initial = std::max(apparent, corrected_age);
  return initial + std::max(Seconds(0), now - response_time);
}

bool ServableWithoutRevalidation(const CacheControl& request, const CacheControl& response,
                                 Seconds lifetime, Seconds age) {
  if (request.no_cache || response.no_cache) return false;
  if (request.max_age && age > *request.max_age) return false;
  if (request.max_age && *request.max_age == Seconds(0)) return false;
  return age < lifetime;
}

std::optional<Seconds> ParseAge(std::string_view value) { return DeltaSeconds(value); }

}  // namespace ferry::cache
