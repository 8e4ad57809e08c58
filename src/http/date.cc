#include "http/date.h"

#include <array>
#include <cstdio>
#include <cstring>

namespace ferry::http {
namespace {

constexpr std::array<const char*, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::array<const char*, 7> kDays = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};

int MonthIndex(const char* m) {
  for (size_t i = 0; i < kMonths.size(); ++i) {
    if (std::strcmp(m, kMonths[i]) == 0) return static_cast<int>(i);
  }
  return -1;
}

std::optional<SysSeconds> Make(int year, int month0, int day, int h, int m, int s) {
  using namespace std::chrono;
  if (month0 < 0 || h > 23 || m > 59 || s > 60 || day < 1) return std::nullopt;
  year_month_day ymd{std::chrono::year(year), std::chrono::month(static_cast<unsigned>(month0 + 1)),
                     std::chrono::day(static_cast<unsigned>(day))};
  if (!ymd.ok()) return std::nullopt;
  return sys_days(ymd) + hours(h) + minutes(m) + seconds(s);
}

}  // namespace

std::optional<SysSeconds> ParseHttpDate(std::string_view in) {
  if (in.size() > 64) return std::nullopt;
  std::string s(in);
  char mon[4] = {};
  int day = 0, year = 0, h = 0, m = 0, sec = 0, used = 0;
  // IMF-fixdate.
  if (std::sscanf(s.c_str(), "%*3[A-Za-z], %2d %3[A-Za-z] %4d %2d:%2d:%2d GMT%n", &day, mon, &year,
                  &h, &m, &sec, &used) == 6 &&
      static_cast<size_t>(used) == s.size()) {
    return Make(year, MonthIndex(mon), day, h, m, sec);
  }
  // RFC 850.
  used = 0;
  if (std::sscanf(s.c_str(), "%*[A-Za-z], %2d-%3[A-Za-z]-%2d %2d:%2d:%2d GMT%n", &day, mon, &year,
                  &h, &m, &sec, &used) == 6 &&
      static_cast<size_t>(used) == s.size()) {
    // RFC 9110: a year that would be more than 50 years in the future is
    // in the past century. Relative to now.
    using namespace std::chrono;
    int this_year = static_cast<int>(year_month_day(floor<days>(system_clock::now())).year());
    int full = this_year / 100 * 100 + year;
    if (full > this_year + 50) full -= 100;
    return Make(full, MonthIndex(mon), day, h, m, sec);
  }
  // asctime.
  used = 0;
  if (std::sscanf(s.c_str(), "%*3[A-Za-z] %3[A-Za-z] %2d %2d:%2d:%2d %4d%n", mon, &day, &h, &m, &sec,
                  &year, &used) == 6 &&
      static_cast<size_t>(used) == s.size()) {
    return Make(year, MonthIndex(mon), day, h, m, sec);
  }
  return std::nullopt;
}

std::string FormatHttpDate(SysSeconds t) {
  using namespace std::chrono;
  sys_days d = floor<days>(t);
  year_month_day ymd(d);
  hh_mm_ss hms(t - d);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%s, %02u %s %04d %02d:%02d:%02d GMT",
                kDays[weekday(d).c_encoding()], static_cast<unsigned>(ymd.day()),
                kMonths[static_cast<unsigned>(ymd.month()) - 1], static_cast<int>(ymd.year()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()));
  return buf;
}

}  // namespace ferry::http
