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

}  // namespace ferry
