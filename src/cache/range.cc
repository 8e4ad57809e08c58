#include "cache/range.h"

#include <charconv>

#include "base/strings.h"
#include "http/date.h"

namespace ferry::cache {
namespace {

// A run of digits, nothing else; nullopt otherwise (and on overflow).
bool ParseDigits(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool StrongTag(std::string_view t) { return t.size() >= 2 && t.front() == '"' && t.back() == '"'; }

// RFC 9110 13.1.5: the range applies only when If-Range names the current
// representation by a strong validator.
bool IfRangeHolds(std::string_view if_range, std::string_view etag, std::string_view last_modified) {
  if_range = TrimOws(if_range);
  if (if_range.empty()) return true;
  if (if_range.front() == '"' || if_range.substr(0, 2) == "W/") {
    return StrongTag(if_range) && StrongTag(etag) && if_range == etag;
  }
  auto a = http::ParseHttpDate(if_range);
  auto b = http::ParseHttpDate(last_modified);
  return a && b && *a == *b;
}

}  // namespace

RangeDecision DecideRange(std::string_view range, std::string_view if_range, std::string_view etag,
                          std::string_view last_modified, uint64_t length) {
  RangeDecision whole;
  range = TrimOws(range);
  if (range.empty()) return whole;
  size_t eq = range.find('=');
  if (eq == std::string_view::npos || AsciiLower(TrimOws(range.substr(0, eq))) != "bytes") return whole;
  std::string_view spec = TrimOws(range.substr(eq + 1));
  if (spec.find(',') != std::string_view::npos) return whole;  // several ranges: not served
  size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return whole;
  std::string_view a = TrimOws(spec.substr(0, dash)), b = TrimOws(spec.substr(dash + 1));
  uint64_t first = 0, last = 0;
  RangeDecision d;
  d.kind = RangeDecision::Kind::kPartial;
  if (a.empty()) {  // suffix: the last b bytes
    if (!ParseDigits(b, &last)) return whole;
    if (!IfRangeHolds(if_range, etag, last_modified)) return whole;
    if (last == 0 || length == 0) return {RangeDecision::Kind::kUnsatisfiable};
    d.first = length - std::min(last, length);
    d.last = length - 1;
    return d;
  }
  if (!ParseDigits(a, &first)) return whole;
  if (b.empty()) {
    last = UINT64_MAX;
  } else if (!ParseDigits(b, &last) || last < first) {
    return whole;
  }
  if (!IfRangeHolds(if_range, etag, last_modified)) return whole;
  if (first >= length) return {RangeDecision::Kind::kUnsatisfiable};
  d.first = first;
  d.last = std::min(last, length - 1);
  return d;
}

}  // namespace ferry::cache
