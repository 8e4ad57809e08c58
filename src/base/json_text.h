#pragma once
// JSON as text, never throwing: bytes that are not UTF-8 (a key from a
// filesystem of another encoding, a header's obs-text, a client's request
// target) become U+FFFD instead of nlohmann's type_error 316, which would
// otherwise end the process. For what is shown or answered; what must
// round-trip exactly is checked to be UTF-8 before it is stored.

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

namespace ferry {

// Any nlohmann JSON type: an ordered_json keeps its keys in insertion order.
template <class Json>
std::string DumpJson(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}
inline std::string DumpJson(const nlohmann::json& j, int indent = -1) { return DumpJson<nlohmann::json>(j, indent); }

// The integer `v` holds, as T. nlohmann's get<T>() casts a float (4e23)
// or a value out of T's range as it is — undefined behaviour for a float;
// this throws nlohmann's type_error instead, so a decoder's catch of
// json::exception turns damage into its one-line error.
template <class T>
T JsonInt(const nlohmann::json& v) {
  static_assert(std::is_integral_v<T>);
  bool fits = false;
  if (v.is_number_unsigned()) {
    fits = v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max());
  } else if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    fits = std::is_signed_v<T> ? i >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                                     i <= static_cast<int64_t>(std::numeric_limits<T>::max())
                               : i >= 0 && static_cast<uint64_t>(i) <=
                                               static_cast<uint64_t>(std::numeric_limits<T>::max());
  }
  if (!fits)
    throw nlohmann::json::type_error::create(302, "not an integer in range: " + v.dump(), nullptr);
  return v.is_number_unsigned() ? static_cast<T>(v.get<uint64_t>())
                                : static_cast<T>(v.get<int64_t>());
}

// j[key] as JsonInt<T> when present, else `fallback`.
template <class T>
T JsonIntOr(const nlohmann::json& j, const char* key, T fallback) {
  auto it = j.find(key);
  return it == j.end() ? fallback : JsonInt<T>(*it);
}

}  // namespace ferry
