#include "cache/transcode_policy.h"

#include "base/strings.h"
#include "cache/freshness.h"

namespace ferry::cache {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

bool CompressibleType(std::string_view content_type, const std::vector<std::string>& patterns) {
  std::string type = AsciiLower(TrimOws(content_type.substr(0, content_type.find(';'))));
  size_t slash = type.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == type.size()) return false;
  for (const std::string& raw : patterns) {
    std::string p = AsciiLower(raw);
    if (p.size() > 1 && p[0] == '*' && p[1] == '+') {
      if (EndsWith(type, p.substr(1))) return true;
    } else if (EndsWith(p, "/*")) {
      if (type.compare(0, p.size() - 1, p, 0, p.size() - 1) == 0) return true;
    } else if (type == p) {
      return true;
    }
  }
  return false;
}

TranscodeDecision DecideTranscode(const ResponseFacts& r, const TranscodeSettings& s) {
  auto as_received = [](const char* why) { return TranscodeDecision{Transcode::kAsReceived, why}; };
  if (r.range_request || r.status == 206) return as_received("range");
  if (r.status != 200) return as_received("not a 200");
  std::string coding = AsciiLower(TrimOws(r.content_encoding));
  if (!coding.empty() && coding != "identity") return as_received("already encoded");
  if (!r.content_length) return as_received("unknown length");
  if (!CompressibleType(r.content_type, s.types)) return as_received("type not compressible");
  if (*r.content_length < s.min_size) return as_received("below the minimum size");
  if (!s.ignore_no_transform && ParseCacheControl(r.cache_control).no_transform) {
    return as_received("no-transform");
  }
  return {Transcode::kZstd, "eligible"};
}

}  // namespace ferry::cache
