#pragma once
// The checksum the cache's binary formats store (segment records, big
// object headers and seek tables): the first 8 bytes of SHA-256 over the
// concatenation of its arguments, read little-endian. On disk already:
// changing it makes every stored record unreadable.

#include <cstdint>
#include <string_view>

namespace ferry::cache {

uint64_t FormatSum8(std::string_view a, std::string_view b = {});

}  // namespace ferry::cache
