#include "cache/access.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>
#include <optional>

namespace ferry::cache {
namespace {

std::optional<AddressBlock> ParseAddress(const std::string& s) {
  AddressBlock b;
  if (inet_pton(AF_INET, s.c_str(), b.bytes.data()) == 1) {
    b.prefix = 32;
    return b;
  }
  if (inet_pton(AF_INET6, s.c_str(), b.bytes.data()) == 1) {
    static const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(b.bytes.data(), kMapped, 12) == 0) {  // ::ffff:a.b.c.d is IPv4
      std::memmove(b.bytes.data(), b.bytes.data() + 12, 4);
      std::memset(b.bytes.data() + 4, 0, 12);
      b.prefix = 32;
      return b;
    }
    b.v6 = true;
    b.prefix = 128;
    return b;
  }
  return std::nullopt;
}

bool PrefixMatch(const AddressBlock& block, const AddressBlock& a) {
  if (block.v6 != a.v6) return false;
  int full = block.prefix / 8, rest = block.prefix % 8;
  if (std::memcmp(block.bytes.data(), a.bytes.data(), full) != 0) return false;
  if (rest == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (block.bytes[full] & mask) == (a.bytes[full] & mask);
}

}  // namespace

Result<AllowList> ParseAllowList(const std::vector<std::string>& items) {
  AllowList list;
  for (const std::string& item : items) {
    size_t slash = item.find('/');
    auto block = ParseAddress(item.substr(0, slash));
    if (!block) return Status::InvalidArgument("'" + item + "' is not an IP address or CIDR block");
    if (slash != std::string::npos) {
      std::string_view p = std::string_view(item).substr(slash + 1);
      int bits = -1;
      auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), bits);
      int max = block->v6 ? 128 : 32;
      if (ec != std::errc() || end != p.data() + p.size() || bits < 0 || bits > max) {
        return Status::InvalidArgument("'" + item + "': prefix length must be 0.." + std::to_string(max));
      }
      block->prefix = bits;
    }
    list.push_back(*block);
  }
  return list;
}

bool Allowed(const AllowList& list, std::string_view address) {
  auto a = ParseAddress(std::string(address));
  if (!a) return false;
  for (const AddressBlock& b : list) {
    if (PrefixMatch(b, *a)) return true;
  }
  return false;
}

}  // namespace ferry::cache
