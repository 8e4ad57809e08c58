#pragma once
// The metadata sidecar that keeps an object's ETag and headers beside its
// data file. For the data file "<dir>/<name>" the sidecar is
// "<dir>/.<name>%meta" (a reserved name: it can never be an object, and it
// is hidden from ls). Format, one JSON object:
//
//   {"v": 1,
//    "etag": "9e107d9d372bb6826bd81d3542a419d6",   // no quotes; "-N" multipart
//    "size": 43,                                   // of the data file
//    "mtime_ns": 1718000000123456789,              // of the data file
//    "headers": {"content_type": "...", "content_encoding": "...",
//                "content_disposition": "...", "cache_control": "...",
//                "content_language": "...", "expires": "...",
//                "user": {"name": "value", ...}}}
//
// size and mtime_ns tie the sidecar to one version of the data file: if
// another tool rewrote the file (or a crash separated the two renames of a
// Put) they no longer match and the sidecar is ignored, so the object falls
// back to a computed MD5 and empty headers instead of reporting a wrong ETag.
// Absent header fields are empty; unknown fields are ignored.

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "store/object_store.h"

namespace ferry::local {

struct ObjectMeta {
  std::string etag;
  ObjectHeaders headers;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};

std::string SidecarName(std::string_view data_name);

std::string SerializeMeta(const ObjectMeta& meta);

// nullopt for anything that is not a well-formed version-1 sidecar.
std::optional<ObjectMeta> ParseMeta(std::string_view json);

// True if `meta` describes the data file whose stat is `st`.
bool MetaMatches(const ObjectMeta& meta, const struct stat& st);

// Headers on their own (used by the multipart manifest too).
std::string SerializeHeaders(const ObjectHeaders& headers);
std::optional<ObjectHeaders> ParseHeaders(std::string_view json);

}  // namespace ferry::local
