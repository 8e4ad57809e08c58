#pragma once
// Small string helpers shared across layers.

#include <cctype>
#include <string>
#include <string_view>

namespace ferry {

// ASCII lower-case copy (HTTP header names, S3 header values).
inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Without the optional whitespace (spaces and tabs) HTTP allows around
// header values and list members.
inline std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace ferry
