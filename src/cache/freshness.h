#pragma once
// HTTP caching policy for a shared cache (RFC 9111), as pure functions:
// parsing Cache-Control, whether a response may be stored, how long it
// stays fresh, and how old a stored response is. The server feeds them
// header values and clock readings; nothing here reads a clock.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::cache {

using Seconds = std::chrono::seconds;
using SysSeconds = std::chrono::sys_seconds;

// Directives of one Cache-Control value (request or response). Unknown
// directives are ignored; a malformed delta-seconds counts as absent, but a
// malformed max-age on a response makes it stale (RFC 9111 4.2.1 asks for
// "treat as stale" when in doubt), see max_age_invalid.
struct CacheControl {
  bool no_store = false;
  bool no_cache = false;
  bool private_ = false;
  bool public_ = false;
  bool must_revalidate = false;  // or proxy-revalidate: both bind a shared cache
  bool no_transform = false;
  bool only_if_cached = false;
  std::optional<Seconds> max_age;
  std::optional<Seconds> s_maxage;
  bool max_age_invalid = false;
};

CacheControl ParseCacheControl(std::string_view value);

struct CacheSettings {
  // Heuristic freshness (RFC 9111 4.2.2) of a response with Last-Modified
  // and no explicit lifetime: this fraction of its age at Date (Squid's,
  // Traffic Server's and browsers' 10%), at most max_heuristic. 0: none.
  double heuristic_fraction = 0.1;
  Seconds max_heuristic{86400};
  Seconds default_ttl{0};  // lifetime of a response with neither
};

// What the storage decision looks at.
struct StoreFacts {
  std::string method = "GET";
  CacheControl request;
  bool authorization = false;   // the request carried Authorization
  int status = 200;
  CacheControl response;
  bool has_expires = false;     // an Expires header, valid or not
  bool has_validator = false;   // ETag or Last-Modified
  bool has_last_modified = false;
  bool set_cookie = false;
  std::string vary;             // "" when absent
};

struct StoreDecision {
  bool store = false;
  const char* reason = "";
};

// Whether a shared cache may keep this response (RFC 9111 section 3), and
// why not. Like nginx and Varnish's defaults, a response setting a cookie
// is not stored. ferry keeps one object per URL, so a response that varies
// on any request field but Accept-Encoding is not stored (RFC 9111 4.1
// would need one object per variant).
StoreDecision DecideStore(const StoreFacts& f, const CacheSettings& s);

struct Freshness {
  Seconds lifetime{0};
  bool heuristic = false;  // from Last-Modified (RFC 9111 4.2.2), not from the origin
};

// How long a stored response is fresh (RFC 9111 4.2.1): 0 under no-cache;
// else s-maxage, max-age, Expires - Date (an invalid Expires: 0); else,
// with Last-Modified, the heuristic (a fraction of Date - Last-Modified,
// capped; 0 for a Last-Modified in the future); else the default TTL.
// `date` defaults to the time the response arrived.
Freshness FreshnessLifetime(const CacheControl& response, std::optional<SysSeconds> expires,
                            bool has_expires, std::optional<SysSeconds> date,
                            std::optional<SysSeconds> last_modified, SysSeconds response_time,
                            const CacheSettings& s);

// The age of a stored response now (RFC 9111 4.2.3), from the Age and Date
// headers it came with and when it was requested and received.
Seconds CurrentAge(std::optional<Seconds> age_header, std::optional<SysSeconds> date,
                   SysSeconds request_time, SysSeconds response_time, SysSeconds now);

// Whether a stored response may be served without asking the origin: it
// is fresh, and the request neither forbids that (no-cache, max-age=0 or
// any max-age it has outgrown) nor is it marked no-cache itself.
bool ServableWithoutRevalidation(const CacheControl& request, const CacheControl& response,
                                 Seconds lifetime, Seconds age);

// The delta-seconds of an Age header; nullopt when absent or malformed.
std::optional<Seconds> ParseAge(std::string_view value);

}  // namespace ferry::cache
