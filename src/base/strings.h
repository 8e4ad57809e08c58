#pragma once
// Small string helpers shared across layers.

#include <string>
#include <string_view>
#include <vector>

namespace ferry {

inline char AsciiLowerChar(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// ASCII lower-case copy (HTTP header names, S3 header values).
inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = AsciiLowerChar(c);
  return out;
}

// ASCII case-insensitive equality (HTTP header names, tokens), without
// copying.
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLowerChar(a[i]) != AsciiLowerChar(b[i])) return false;
  }
  return true;
}

// Without the optional whitespace (spaces and tabs) HTTP allows around
// header values and list members.
inline std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The lines of `text`, split at '\n' (without it; a '\r' before it stays),
// empty ones kept, none after a final '\n'. Views into `text`.
inline std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    out.push_back(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  return out;
}

}  // namespace ferry
