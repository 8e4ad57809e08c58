#include "range.h"

#include <charconv>
#include <optional>

namespace ferry::s3server {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<uint64_t> ParseNumber(std::string_view s) {
  s = Trim(s);
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

RangeSpec ParseRange(std::string_view header, uint64_t size) {
  RangeSpec whole;
  header = Trim(header);
  constexpr std::string_view kUnit = "bytes=";
  if (header.substr(0, kUnit.size()) != kUnit) return whole;
  std::string_view spec = header.substr(kUnit.size());
  if (spec.find(',') != std::string_view::npos) return whole;
  size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return whole;
  std::string_view a = Trim(spec.substr(0, dash)), b = Trim(spec.substr(dash + 1));

  RangeSpec r;
  r.kind = RangeSpec::Kind::kPartial;
  if (a.empty()) {  // suffix: the last n bytes
    auto n = ParseNumber(b);
    if (!n) return whole;
    if (*n == 0 || size == 0) return {RangeSpec::Kind::kUnsatisfiable, 0, 0};
    r.first = *n >= size ? 0 : size - *n;
    r.last = size - 1;
    return r;
  }
  auto first = ParseNumber(a);
  if (!first) return whole;
  std::optional<uint64_t> last;
  if (!b.empty()) {
    last = ParseNumber(b);
    if (!last || *last < *first) return whole;  // S3 ignores a reversed range
  }
  if (*first >= size) return {RangeSpec::Kind::kUnsatisfiable, 0, 0};
  r.first = *first;
  r.last = last ? std::min(*last, size - 1) : size - 1;
  return r;
}

}  // namespace ferry::s3server
