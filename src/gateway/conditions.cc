#include "gateway/conditions.h"

#include "http/date.h"

namespace ferry::gateway {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Whether the list `field` names `etag` ("*" names any); `weak` lets a
// W/ tag match its strong form.
bool ListMatches(std::string_view field, std::string_view etag, bool weak) {
  while (!field.empty()) {
    size_t comma = field.find(',');
    std::string_view item = Trim(field.substr(0, comma));
    field = comma == std::string_view::npos ? std::string_view() : field.substr(comma + 1);
    if (item == "*") return true;
    if (item.substr(0, 2) == "W/") {
      if (!weak) continue;
      item.remove_prefix(2);
    }
    if (item.size() >= 2 && item.front() == '"' && item.back() == '"') {
      item = item.substr(1, item.size() - 2);
    }
    if (item == etag) return true;
  }
  return false;
}

// The object's time in whole seconds (HTTP dates have no finer grain).
std::chrono::sys_seconds Seconds(std::chrono::system_clock::time_point t) {
  return std::chrono::floor<std::chrono::seconds>(t);
}

}  // namespace

Precondition Evaluate(const RequestConditions& c, std::string_view etag,
                      std::chrono::system_clock::time_point last_modified) {
  if (!c.if_match.empty()) {
    if (!ListMatches(c.if_match, etag, false)) return Precondition::kFailed;
  } else if (!c.if_unmodified_since.empty()) {
    auto when = http::ParseHttpDate(c.if_unmodified_since);
    if (when && Seconds(last_modified) > *when) return Precondition::kFailed;
  }
  if (!c.if_none_match.empty()) {
    if (ListMatches(c.if_none_match, etag, true)) return Precondition::kNotModified;
  } else if (!c.if_modified_since.empty()) {
    auto when = http::ParseHttpDate(c.if_modified_since);
    if (when && Seconds(last_modified) <= *when) return Precondition::kNotModified;
  }
  return Precondition::kProceed;
}

}  // namespace ferry::gateway
