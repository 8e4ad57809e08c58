#pragma once
// Compression dictionaries (RFC 9842) as pure functions: the header fields
// (Use-As-Dictionary, Available-Dictionary, Dictionary-ID: RFC 9651
// structured fields), which requests a dictionary may compress an answer
// for, the names of versioned assets, and the framing of a dcz body.
//
// ferry evaluates a dictionary's `match` (a URL pattern) in the shape
// sites use: a path, or an absolute URL of the dictionary's own origin,
// with `*` wildcards (any run of characters, '/' included) and '\'
// escapes. Its search and hash parts are not compared. A pattern with
// other URLPattern syntax (":name", groups, modifiers) is passed on to the
// client but never used by ferry.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "crypto/digest.h"

namespace ferry::cache {

// Use-As-Dictionary (RFC 9842 2.1).
struct DictionaryMark {
  std::string match;                    // a URL pattern (required)
  std::vector<std::string> match_dest;  // request destinations; empty: any
  std::string id;                       // echoed by clients in Dictionary-ID
  std::string type = "raw";             // only "raw" is defined
};

// A one-line kInvalidArgument for a field that is not a structured
// dictionary or has no string `match`; unknown members are ignored.
Result<DictionaryMark> ParseUseAsDictionary(std::string_view value);
std::string FormatUseAsDictionary(const DictionaryMark& mark);

// Available-Dictionary: the SHA-256 a client holds (an sf-binary of 32
// bytes), or nullopt.
std::optional<Sha256Digest> ParseAvailableDictionary(std::string_view value);
// Dictionary-ID: an sf-string, or nullopt.
std::optional<std::string> ParseDictionaryId(std::string_view value);

// The path pattern `match` stands for, given the dictionary's own path and
// origin (a relative pattern is resolved against the path's directory; an
// absolute one must name that origin); nullopt when ferry cannot evaluate it.
std::optional<std::string> ResolveMatch(std::string_view match, std::string_view dictionary_path,
                                        std::string_view host, bool tls);
// Whether `path` (a request target; its query is not compared) matches a
// resolved pattern.
bool PathMatches(std::string_view pattern, std::string_view path);

// For a versioned asset name (a hash or a version in the file name:
// /static/app.3f2a9c1b.js, /js/jquery-3.6.1.min.js, /app.v1.js), the
// pattern that matches its other versions (/static/app.*.js); else nullopt.
std::optional<std::string> VersionedPattern(std::string_view path);

// Browsers use dictionaries in secure contexts only: HTTPS, or a loopback
// host (localhost, *.localhost, 127.0.0.0/8, [::1]). `host` may carry a port.
bool SecureContext(bool tls, std::string_view host);

// A dictionary as the cache knows it, and whether it may compress an
// answer: same origin (host and scheme), the path matching its pattern,
// the request's Sec-Fetch-Dest in match-dest (when that is not empty),
// Dictionary-ID equal to its id (when it has one), not expired.
struct DictionaryInfo {
  Sha256Digest hash{};
  std::string host;  // lower case, with its port if the request had one
  bool tls = false;
  std::string pattern;  // ResolveMatch's
  DictionaryMark mark;
  int64_t expires = 0;  // Unix seconds
};
struct DictionaryRequest {
  std::string_view host, path, dest, id;  // id: Dictionary-ID's value ("" if absent)
  bool tls = false;
  int64_t now = 0;
};
bool DictionaryApplies(const DictionaryInfo& d, const DictionaryRequest& r);

// The 40 bytes a dcz body begins with (RFC 9842 5.2): a zstd skippable
// frame holding the dictionary's SHA-256.
std::string DczHeader(const Sha256Digest& hash);
inline constexpr size_t kDczHeaderSize = 40;

// The ETag of a dcz answer: the zstd one's with the dictionary's first
// 8 hex digits ("abc" -> "abc-dcz-1f2e3d4c"), so answers against two
// dictionaries differ; "" stays "".
std::string DczEtag(std::string_view etag, const Sha256Digest& hash);

}  // namespace ferry::cache
