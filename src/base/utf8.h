#pragma once
// UTF-8 well-formedness, for what must be UTF-8 to be kept as given (object
// keys of the local store, a job's spec as JSON text).

#include <cstddef>
#include <string_view>

namespace ferry {

// Length of the UTF-8 sequence starting at s[i], or 0 if it is malformed
// (cut short, overlong, a surrogate or beyond U+10FFFF).
size_t Utf8SequenceLength(std::string_view s, size_t i);

// True if `s` is well-formed UTF-8.
bool IsValidUtf8(std::string_view s);

}  // namespace ferry
