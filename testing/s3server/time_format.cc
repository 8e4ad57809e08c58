#include "time_format.h"

#include <cstdio>
#include <ctime>

#include "base/unix_time.h"

namespace ferry::s3server {
namespace {

std::tm Utc(TimePoint t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return tm;
}

}  // namespace

std::string HttpDate(TimePoint t) {
  std::tm tm = Utc(t);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

std::string IsoDate(TimePoint t) {
  std::tm tm = Utc(t);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() %
            1000;
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[80];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms));
  return out;
}

std::optional<TimePoint> ParseAmzDate(std::string_view s) {
  if (s.size() != 16 || s[8] != 'T' || s[15] != 'Z') return std::nullopt;
  for (size_t i = 0; i < 15; ++i) {
    if (i != 8 && (s[i] < '0' || s[i] > '9')) return std::nullopt;
  }
  auto num = [&](size_t pos, size_t len) {
    int v = 0;
    for (size_t i = pos; i < pos + len; ++i) v = v * 10 + (s[i] - '0');
    return v;
  };
  std::tm tm{};
  tm.tm_year = num(0, 4) - 1900;
  tm.tm_mon = num(4, 2) - 1;
  tm.tm_mday = num(6, 2);
  tm.tm_hour = num(9, 2);
  tm.tm_min = num(11, 2);
  tm.tm_sec = num(13, 2);
  if (tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
      tm.tm_min > 59 || tm.tm_sec > 60) {
    return std::nullopt;
  }
  // Clamped: a year past 2262 overflows a nanosecond clock (UBSan, fuzz.s3server).
  return ClampedTimePoint(std::chrono::sys_seconds(std::chrono::seconds(timegm(&tm))));
}

}  // namespace ferry::s3server
