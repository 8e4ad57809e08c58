#pragma once
// Which client addresses may use the cache's administrative methods
// (PURGE): a list of addresses and CIDR blocks, IPv4 or IPv6, matched
// exactly by prefix. An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is
// matched as the IPv4 address it carries. Pure.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ferry::cache {

struct AddressBlock {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};  // IPv4 in the first 4
  int prefix = 0;                   // significant bits
};

using AllowList = std::vector<AddressBlock>;

// Items like "127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8". A bad item is a
// one-line kInvalidArgument naming it.
Result<AllowList> ParseAllowList(const std::vector<std::string>& items);

// Whether `address` (as a socket reports it) falls in any block.
bool Allowed(const AllowList& list, std::string_view address);

}  // namespace ferry::cache
