#pragma once
namespace ferry {
inline constexpr const char* kVersion = "0.1.0";
}  // namespace ferry
