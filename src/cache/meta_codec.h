#pragma once
// An entry's metadata (EntryMeta: key, status, the origin's header fields,
// lengths, times) in a compact binary form, for segment records and big
// object files. A few hundred bytes of JSON per entry mattered once small
// entries were packed densely: this form is about a third of it.
//
//   u8      version (1)
//   varint  status
//   u8      encoding: 0 identity, 1 zstd
//   varint  logical_length, stored_length
//   svarint request_time (Unix seconds), response_time - request_time
//   bytes   key                      (bytes: varint length, then the bytes)
//   varint  number of header fields, then for each:
//     varint  name: 0 = a literal (bytes) follows; 1..N = kNames[n-1] as
//             spelled there; N+1..2N = the same name in lower case
//     varint  value tag: 2*L = L literal bytes follow; 1 = an IMF-fixdate,
//             as a signed varint of Unix seconds (only used when formatting
//             it again gives the same bytes)
//
// Every byte of a name or value round-trips exactly (obs-text included).
// The name table is part of the format: entries are only ever appended.

#include <string>
#include <string_view>

#include "base/status.h"
#include "cache/entry.h"

namespace ferry::cache {

std::string EncodeMeta(const EntryMeta& meta);

// kCorruption when `in` is not exactly one encoded EntryMeta.
Result<EntryMeta> DecodeMeta(std::string_view in);

}  // namespace ferry::cache
