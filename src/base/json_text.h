#pragma once
// JSON as text, never throwing: bytes that are not UTF-8 (a key from a
// filesystem of another encoding, a header's obs-text, a client's request
// target) become U+FFFD instead of nlohmann's type_error 316, which would
// otherwise end the process. For what is shown or answered; what must
// round-trip exactly is checked to be UTF-8 before it is stored.

#include <string>

#include <nlohmann/json.hpp>

namespace ferry {

inline std::string DumpJson(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ferry
