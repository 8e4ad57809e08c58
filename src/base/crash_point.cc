#include "base/crash_point.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>

namespace ferry {
namespace {

struct Armed {
  std::string name;
  long at = 0;
  std::atomic<long> hits{0};
};

// Parsed once from the environment; null when no crash point is armed.
Armed* Config() {
  static Armed* armed = [] () -> Armed* {
    const char* v = std::getenv("FERRY_CRASH_AT");
    if (v == nullptr || *v == '\0') return nullptr;
    std::string s(v);
    size_t colon = s.rfind(':');
    auto* a = new Armed;
    a->name = s.substr(0, colon);
    a->at = colon == std::string::npos ? 1 : std::strtol(s.c_str() + colon + 1, nullptr, 10);
    if (a->at < 1) a->at = 1;
    return a;
  }();
  return armed;
}

}  // namespace

void CrashPoint(std::string_view name) {
  Armed* a = Config();
  if (a == nullptr || name != a->name) return;
  if (a->hits.fetch_add(1) + 1 == a->at) ::kill(::getpid(), SIGKILL);
}

}  // namespace ferry
