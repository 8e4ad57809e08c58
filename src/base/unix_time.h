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

// A time in whole seconds as a system_clock time_point (nanoseconds here:
// years 1678 to 2262), clamped to that range rather than overflowing: a
// date a server sends from the year 2334 or 9999 becomes the latest time
// there is, not undefined behaviour.
inline std::chrono::system_clock::time_point ClampedTimePoint(std::chrono::sys_seconds t) {
  using namespace std::chrono;
  using Tp = system_clock::time_point;
  constexpr auto kMax = duration_cast<seconds>(Tp::max().time_since_epoch()) - seconds(1);
  constexpr auto kMin = duration_cast<seconds>(Tp::min().time_since_epoch()) + seconds(1);
  const seconds since = t.time_since_epoch();
  return Tp(duration_cast<Tp::duration>(since > kMax ? kMax : since < kMin ? kMin : since));
}

// RFC 3339 in UTC to the second, the milliseconds dropped:
// "2023-11-14T22:13:20Z". How reports and manifests print a time.
std::string Rfc3339Utc(int64_t unix_ms);

// Rfc3339Utc, or "-" for a time not set (0 or less): how job reports show
// a moment that has not happened yet.
inline std::string Rfc3339UtcOrDash(int64_t unix_ms) { return unix_ms <= 0 ? "-" : Rfc3339Utc(unix_ms); }

}  // namespace ferry
