#pragma once
// One cached response as a record of a segment file (segment.h): small
// entries are packed one after another, so a 3 KB stylesheet costs about
// 3 KB of disk rather than a 4 KB block and a file of its own. A record
// checks itself twice: its head (lengths and metadata, read alone when a
// segment is scanned on open) and its body (checked on every read), so a
// torn or damaged record is found, skipped and never served.
//
//   offset  size
//   0       4    magic "FRC1"
//   4       1    state: 'L' live, 'D' dead (removed, evicted or replaced).
//                The one byte ever rewritten in place, so no checksum
//                covers it; anything but 'L' is dead.
//   5       3    zero
//   8       4    u32 M, metadata length (meta_codec.h; holds the key)
//   12      4    u32 B, body length (as stored: zstd or identity)
//   16      8    head checksum: the first 8 bytes of SHA-256 over bytes
//                8..15 and the metadata
//   24      M    metadata
//   24+M    B    body
//   24+M+B  8    body checksum: the first 8 bytes of SHA-256 over the body
//
// Integers are little-endian. A record is 32 + M + B bytes and carries no
// position, so compaction copies it verbatim.
//
// A refresh record (magic "FRR1") is what a revalidation (a 304) stores:
// an entry's new metadata without its body, which stays in the record it
// was stored with. Its body is 8 bytes, that record's body checksum (the
// reference: the store pairs the two by key and checksum, disk_store.h);
// its metadata's stored_length is the referenced body's. Its head checksum
// also covers the kind, so neither kind of record passes for the other.

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cache/entry.h"

namespace ferry::cache {

inline constexpr size_t kRecordHeadSize = 24;
inline constexpr size_t kRecordTailSize = 8;
inline constexpr size_t kRecordStateOffset = 4;
inline constexpr char kRecordLive = 'L';
inline constexpr char kRecordDead = 'D';
inline constexpr uint64_t kMaxRecordBody = 0xFFFFFFFFu;
inline constexpr uint32_t kMaxRecordMeta = 1u << 20;

// The record for `meta` and its stored `body` (meta.stored_length is set
// from body), live. kInvalidArgument for a body over kMaxRecordBody or
// metadata over kMaxRecordMeta.
Result<std::string> EncodeRecord(EntryMeta meta, std::string_view body);

// The refresh record for `meta`, whose body is the one a record with body
// checksum `body_sum` holds. kInvalidArgument for metadata over
// kMaxRecordMeta.
Result<std::string> EncodeRefreshRecord(const EntryMeta& meta, uint64_t body_sum);

struct RecordHead {
  uint32_t meta_length = 0;
  uint32_t body_length = 0;
  bool live = false;
  bool refresh = false;  // a refresh record
  uint64_t size() const { return kRecordHeadSize + meta_length + body_length + kRecordTailSize; }
};

// The fixed head, from the first kRecordHeadSize bytes of `bytes`:
// kCorruption when they are not a record's head (wrong magic, nonzero
// padding, metadata over kMaxRecordMeta) or are too few. Lengths are not
// yet trusted: DecodeRecordMeta checks them.
Result<RecordHead> ParseRecordHead(std::string_view bytes);

// The metadata of a record whose head is `h`, from `prefix` (at least the
// head and the metadata), with the head checksum verified: kCorruption
// otherwise. The body is not looked at.
Result<EntryMeta> DecodeRecordMeta(const RecordHead& h, std::string_view prefix);

struct DecodedRecord {
  RecordHead head;
  EntryMeta meta;
  std::string_view body;  // points into the record's bytes (a refresh record's: its reference)
  uint64_t body_sum = 0;  // the body's checksum (its last 8 bytes)
  uint64_t refers_to = 0; // a refresh record's: the body checksum it refers to
};

// A whole record checked: head, metadata, body checksum, and lengths that
// agree with the metadata. kCorruption naming what was wrong otherwise.
Result<DecodedRecord> DecodeRecord(std::string_view record);

}  // namespace ferry::cache
