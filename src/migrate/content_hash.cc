#include "migrate/content_hash.h"

#include "base/strings.h"
#include "crypto/digest.h"

namespace ferry::migrate {

std::string ListedMd5(std::string_view etag) {
  return IsMd5Hex(etag) ? AsciiLower(etag) : std::string();
}

std::string KnownMd5(const ObjectInfo& info) {
  if (std::string md5 = BodyMd5(info); !md5.empty()) return AsciiLower(md5);
  const auto& user = info.headers.user;
  if (auto it = user.find(kFerryMd5Meta); it != user.end() && IsMd5Hex(it->second)) {
    return AsciiLower(it->second);
  }
  if (auto it = user.find(kRcloneMd5Meta); it != user.end()) {
    std::string raw;
    if (Base64Decode(it->second, &raw) && raw.size() == 16) return HexLower(raw);
  }
  return "";
}

}  // namespace ferry::migrate
