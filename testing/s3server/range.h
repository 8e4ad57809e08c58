#pragma once
// The Range header of GetObject, as S3 reads it: one range in bytes, in the
// forms "bytes=a-b", "bytes=a-" and "bytes=-n". Anything S3 ignores
// (several ranges, another unit, malformed text) means "the whole object".

#include <cstdint>
#include <string_view>

namespace ferry::s3server {

struct RangeSpec {
  enum class Kind {
    kWhole,          // no usable Range header: 200 with the whole body
    kPartial,        // 206 with bytes [first, last]
    kUnsatisfiable,  // 416 InvalidRange
  };
  Kind kind = Kind::kWhole;
  uint64_t first = 0;
  uint64_t last = 0;  // inclusive
  uint64_t length() const { return last - first + 1; }
};

// `header` is the Range header's value ("" when absent); `size` the object's.
RangeSpec ParseRange(std::string_view header, uint64_t size);

}  // namespace ferry::s3server
