#pragma once
// Object key <-> relative path mapping for the local directory backend.
//
// The scheme, chosen so that ordinary keys map to the path a person expects
// ("photos/2024/a b.jpg" -> "photos/2024/a b.jpg") while every valid key maps
// to exactly one path inside the root, and back:
//
//   1. The key is split on '/' into segments; a key of n slashes has n+1
//      segments, some possibly empty ("a//b", "/a", "a/").
//   2. In each segment '%' becomes "%25". Nothing else is escaped.
//   3. An empty segment becomes the component "%".
//   4. A segment whose escaped form is longer than kMaxComponentBytes (240)
//      is cut into pieces of at most kMaxPieceBytes (238) bytes, never inside
//      a "%25" escape or a UTF-8 sequence; every piece but the last gets the
//      continuation marker "%+" and becomes a directory holding the next
//      piece. So every component fits NAME_MAX (255) with room for the
//      sidecar decoration below, for keys up to 1024 bytes.
//   5. A final component equal to "." or ".." becomes "%2E" or "%2E%2E", so
//      no component can ever name the current or parent directory.
//
// An encoded component therefore contains '%' only as "%25", as "%2E" (only
// in the whole components "%2E" and "%2E%2E"), as the whole component "%",
// or as a trailing "%+". Decoding is strict: a name is an encoded component
// only if re-encoding its decoded form reproduces it byte for byte. Every
// other name (anything with '%' followed by another character, e.g.
// "%mpu", ".x%meta", ".%tmp.1f") is reserved for the store's internals and is
// never mistaken for an object. The cost: files placed in the root by other
// tools whose names are not canonical encodings (say "100%.txt") are not
// visible as objects.
//
// Valid keys are 1..kMaxKeyBytes bytes of well-formed UTF-8 without NUL (S3
// requires UTF-8 keys; NUL cannot appear in a path). Everything else is
// kInvalidArgument.
//
// Pure functions; thread-safe.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/utf8.h"

namespace ferry::local {

inline constexpr size_t kMaxKeyBytes = 1024;
inline constexpr size_t kMaxComponentBytes = 240;
inline constexpr size_t kMaxPieceBytes = kMaxComponentBytes - 2;  // + "%+"
inline constexpr std::string_view kContinuationMarker = "%+";

// OK if `key` is a valid object key (see above).
Status ValidateKey(std::string_view key);

using ferry::IsValidUtf8;  // base/utf8.h

// The path components (one or more) that encode one key segment.
std::vector<std::string> EncodeSegment(std::string_view segment);

// The relative path ('/'-separated components, no leading or trailing '/')
// for `key`. kInvalidArgument if the key is not valid.
Result<std::string> EncodeKey(std::string_view key);

// One physical component, decoded: its text and whether it carries the
// continuation marker. kInvalidArgument for names that are not components
// of any encoding (reserved or foreign names). A component that decodes
// here may still be non-canonical; callers that assemble a segment from
// pieces confirm it with EncodeSegment.
struct DecodedComponent {
  std::string text;
  bool continuation = false;
};
Result<DecodedComponent> DecodeComponent(std::string_view component);

// The key for a relative path produced by EncodeKey; kInvalidArgument for
// any path that EncodeKey cannot produce. DecodeKey(EncodeKey(k)) == k.
Result<std::string> DecodeKey(std::string_view rel_path);

// True if `name` can never be produced by EncodeSegment, so it is safe for
// the store's internal files.
bool IsReservedName(std::string_view name);

// True for the names the store itself creates ("%mpu", ".%tmp.<hex>",
// ".<name>%meta"); a reserved name that is not one of these was put there
// by another tool and is not a key this store can represent.
bool IsInternalName(std::string_view name);

}  // namespace ferry::local
