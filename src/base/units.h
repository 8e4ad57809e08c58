#pragma once
// Binary byte units, one definition for every file that sizes buffers,
// parts and chunks.

#include <cstdint>

namespace ferry {

inline constexpr uint64_t kKiB = uint64_t{1} << 10;
inline constexpr uint64_t kMiB = uint64_t{1} << 20;
inline constexpr uint64_t kGiB = uint64_t{1} << 30;

}  // namespace ferry
