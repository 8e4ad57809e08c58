#include "time_format.h"

#include <cstdio>
#include <ctime>

#include "base/unix_time.h"
#include "s3/sigv4_verify.h"

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

std::optional<TimePoint> ParseAmzDate(std::string_view s) { return s3::ParseAmzDate(s); }

}  // namespace ferry::s3server
