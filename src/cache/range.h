#pragma once
// Range requests against a cached representation (RFC 9110 14), as a pure
// function. ferry answers one byte range per request: a Range with several
// ranges, an unknown unit or bad syntax is ignored and the whole
// representation sent (RFC 9110 14.2 allows a server to ignore Range); a
// range starting past the end is 416; If-Range must match strongly (the
// ETag, or Last-Modified exactly), else the whole representation is sent.

#include <cstdint>
#include <string_view>

namespace ferry::cache {

struct RangeDecision {
  enum class Kind { kWhole, kPartial, kUnsatisfiable };
  Kind kind = Kind::kWhole;
  uint64_t first = 0;  // for kPartial: bytes first..last, inclusive
  uint64_t last = 0;
};

// `range` and `if_range` are the request's fields ("" when absent); `etag`
// and `last_modified` are the representation's; `length` its size.
RangeDecision DecideRange(std::string_view range, std::string_view if_range, std::string_view etag,
                          std::string_view last_modified, uint64_t length);

}  // namespace ferry::cache
