#include "cli/cli_util.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

namespace ferry::cli {

Result<uint64_t> ParseSize(std::string_view text) {
  std::string t(text);
  auto bad = [&t] { return Status::InvalidArgument("bad size \"" + t + "\""); };
  double v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v, std::chars_format::fixed);
  if (ec != std::errc() || v < 0 || !std::isfinite(v)) return bad();
  std::string unit(end, static_cast<size_t>(t.data() + t.size() - end));
  for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double mult = 1;
  if (unit.empty() || unit == "b") mult = 1;
  else if (unit == "k" || unit == "kb" || unit == "kib") mult = 1024.0;
  else if (unit == "m" || unit == "mb" || unit == "mib") mult = 1024.0 * 1024;
  else if (unit == "g" || unit == "gb" || unit == "gib") mult = 1024.0 * 1024 * 1024;
  else if (unit == "t" || unit == "tb" || unit == "tib") mult = 1024.0 * 1024 * 1024 * 1024;
  else return Status::InvalidArgument("bad size unit in \"" + t + "\"");
  double bytes = v * mult;
  if (bytes >= 9.0e18) return Status::InvalidArgument("size \"" + t + "\" is too large");
  return static_cast<uint64_t>(std::llround(bytes));
}

int Fail(std::string_view where, const Status& s) {
  std::string line = "ferry: ";
  if (!where.empty()) {
    line += where;
    line += ": ";
  }
  line += s.ToString();
  // One line, always.
  for (auto& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  std::fprintf(stderr, "%s\n", line.c_str());
  return 1;
}

std::string HumanBytes(uint64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

}  // namespace ferry::cli
