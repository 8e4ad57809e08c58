#pragma once
// Conditional GET and HEAD (RFC 9110 13.2.2, as S3 answers them), pure:
// If-Match, then If-Unmodified-Since when there is no If-Match (412 when
// they fail); If-None-Match, then If-Modified-Since when there is no
// If-None-Match (304). ETags compare strongly for If-Match, weakly for
// If-None-Match; "*" matches any object; a date that does not parse is
// ignored.

#include <chrono>
#include <string>
#include <string_view>

namespace ferry::gateway {

struct RequestConditions {
  std::string if_match, if_none_match, if_modified_since, if_unmodified_since;  // "" = absent
};

enum class Precondition { kProceed, kNotModified, kFailed };

// `etag` without quotes; `last_modified` the object's.
Precondition Evaluate(const RequestConditions& c, std::string_view etag,
                      std::chrono::system_clock::time_point last_modified);

}  // namespace ferry::gateway
