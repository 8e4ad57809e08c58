#pragma once
// What the client-facing hop decides per request, as pure functions:
// whether the client takes zstd as it is stored (RFC 9110 12.5.3
// Accept-Encoding with q-values), the ETag of the zstd representation, and
// whether a conditional GET/HEAD is answered 304 (RFC 9110 13.1.2, 13.1.3,
// 13.2.2).

#include <optional>
#include <string>
#include <string_view>

#include "http/date.h"

namespace ferry::cache {

// True when Accept-Encoding admits `coding` with a q-value above 0, by name
// or through "*" (which covers codings it does not name).
bool AcceptsCoding(std::string_view accept_encoding, std::string_view coding);

// The representations of a stored object a client may get.
// kDcz (RFC 9842: zstd against a dictionary the client holds) is never
// chosen here: the proxy answers it when a dictionary applies
// (dictionary.h).
enum class Coding { kIdentity, kZstd, kBr, kGzip, kDcz };
std::string_view CodingName(Coding c);  // "identity", "zstd", "br", "gzip", "dcz"

// What the client-facing hop sends (RFC 9110 12.5.3): among the codings on
// offer (identity always), the one Accept-Encoding
// gives the highest q-value, ties going to the cheapest to send and the
// smallest: zstd (the stored bytes), then br, then gzip, then identity.
// A coding at q=0 is never chosen; identity is the answer when nothing
// else is acceptable (even when "identity;q=0": RFC 9110 lets a server send
// it rather than 406, as nginx does). No Accept-Encoding: identity.
struct CodingOffer {
  bool zstd = false;  // stored as zstd
  bool br = false;    // a br variant may be made
  bool gzip = false;  // a gzip variant may be made
};
Coding ChooseCoding(std::string_view accept_encoding, CodingOffer offer);

// The ETag of a coded representation: "abc" -> "abc-zstd" (or -br, -gzip),
// W/"abc" -> W/"abc-zstd"; "" stays ""; identity keeps the origin's.
// Distinct from the identity representation's, as RFC 9110 8.8.3 requires
// of different encodings.
std::string CodingEtag(std::string_view etag, Coding c);
inline std::string ZstdEtag(std::string_view etag) { return CodingEtag(etag, Coding::kZstd); }

// RFC 9110 8.8.3.2 weak comparison of two entity tags.
bool WeakEtagMatch(std::string_view a, std::string_view b);

// Whether a GET or HEAD with these preconditions is answered 304 for a
// representation with `etag` ("" if none) and `last_modified`.
// If-None-Match, when present, decides alone ("*" or any tag matching
// weakly); else a valid If-Modified-Since not before Last-Modified does.
bool NotModified(std::string_view if_none_match, std::string_view if_modified_since,
                 std::string_view etag, std::optional<http::SysSeconds> last_modified);

}  // namespace ferry::cache
