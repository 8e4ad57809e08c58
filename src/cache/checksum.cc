#include "cache/checksum.h"

#include <string>

#include "cache/bytes.h"
#include "crypto/digest.h"

namespace ferry::cache {

uint64_t FormatSum8(std::string_view a, std::string_view b) {
  StreamingDigest d(StreamingDigest::Kind::kSha256);
  d.Update(a);
  d.Update(b);
  std::string raw = d.Finish();
  return LoadFixed(raw.data(), 8);
}

}  // namespace ferry::cache
