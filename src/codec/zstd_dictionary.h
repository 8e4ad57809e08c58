#pragma once
// zstd against a raw dictionary: the bytes of an earlier response, used as
// a prefix the new content may refer back into (RFC 9842's "dcz" content
// coding; RFC 8878 section 5 calls these raw content dictionaries). A
// frame made here carries no dictionary ID, so a decoder must be handed
// the same bytes. The window obeys RFC 9842 section 5.2: at most 8 MB or
// 1.25 times the dictionary, whichever is larger (and 128 MB at most),
// and only as large as dictionary and content need.

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace ferry::codec {

// The largest window log a dcz frame against `dict_size` bytes may use.
int DczMaxWindowLog(uint64_t dict_size);

// One frame of `in` against `dict` (level 1..19), with its content size
// and checksum.
Result<std::string> ZstdCompressWithPrefix(std::string_view in, std::string_view dict, int level);

// Every frame of `in` decoded against `dict`; kCorruption on damage, a
// window over DczMaxWindowLog or output past `max_size` bytes.
Result<std::string> ZstdDecompressWithPrefix(std::string_view in, std::string_view dict,
                                             uint64_t max_size);

}  // namespace ferry::codec
