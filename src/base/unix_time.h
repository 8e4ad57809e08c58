#pragma once
// Wall-clock times as Unix milliseconds, the unit the state store keeps.

#include <chrono>
#include <cstdint>

namespace ferry {

inline int64_t UnixMs(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

inline int64_t NowUnixMs() { return UnixMs(std::chrono::system_clock::now()); }

}  // namespace ferry
