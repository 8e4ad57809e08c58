#pragma once
// Wall-clock times as Unix milliseconds, the unit the state store keeps,
// and their one printed form.

#include <chrono>
#include <cstdint>
#include <string>

namespace ferry {

inline int64_t UnixMs(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

inline int64_t NowUnixMs() { return UnixMs(std::chrono::system_clock::now()); }

// RFC 3339 in UTC to the second, the milliseconds dropped:
// "2023-11-14T22:13:20Z". How reports and manifests print a time.
std::string Rfc3339Utc(int64_t unix_ms);

}  // namespace ferry
