#pragma once
// What a cached response is (EntryMeta: the metadata every layer passes
// around), and the on-disk form of one response in the cache's earlier
// layout, one self-checking file per entry: DiskStore now keeps entries in
// segments (segment_record.h) and reads these files only to move a cache
// directory of that layout into segments (disk_store_open.cc).
//
//   "FERRY-CACHE-2\n"              magic (14 bytes)
//   u32 little-endian              length of the metadata
//   metadata                       JSON: EntryMeta; its strings (key, header
//                                  names and values) hold bytes, each byte
//                                  written as the code point of its value
//   body                           stored_length bytes, as stored (zstd or not)
//   SHA-256                        32 bytes over metadata and body
//
// Files were written whole to a temporary name and renamed into place, so
// a reader saw an old entry, a new one, or none.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace ferry::cache {

// kZstdDict: one zstd frame made with a dictionary the cache trained
// (trained_dictionaries.h), named by the frame's dictionary ID; decoded
// before it is sent (no client has that dictionary).
enum class StoredEncoding { kIdentity, kZstd, kZstdDict };

struct EntryMeta {
  std::string key;  // the cache key the entry answers
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // as from the origin
  StoredEncoding encoding = StoredEncoding::kIdentity;
  uint64_t logical_length = 0;  // bytes a client gets decoded
  uint64_t stored_length = 0;   // bytes of the body in the file
  int64_t request_time = 0;     // Unix seconds: when the origin was asked
  int64_t response_time = 0;    // and when it answered
};

inline constexpr std::string_view kEntryMagic = "FERRY-CACHE-2\n";
inline constexpr size_t kEntryChecksumSize = 32;

// The whole file for `meta` and its stored `body` (meta.stored_length is
// set from body).
std::string EncodeEntry(EntryMeta meta, std::string_view body);

struct DecodedEntry {
  EntryMeta meta;
  std::string_view body;  // points into the file's bytes
};

// Checks and splits a whole entry file. Any damage — wrong magic, lengths
// that do not add up, metadata that is not valid, a checksum mismatch — is
// a kCorruption error naming what was wrong.
Result<DecodedEntry> DecodeEntry(std::string_view file);

}  // namespace ferry::cache
