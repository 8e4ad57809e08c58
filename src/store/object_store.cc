#include "store/object_store.h"

#include "base/strings.h"
#include "crypto/digest.h"

namespace ferry {

std::string BodyMd5(const ObjectInfo& info) {
  if (info.etag_is_md5 && IsMd5Hex(info.etag)) return AsciiLower(info.etag);
  if (IsMd5Hex(info.md5_hex)) return AsciiLower(info.md5_hex);
  return "";
}

}  // namespace ferry
