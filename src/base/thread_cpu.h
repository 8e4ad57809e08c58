#pragma once
// CPU time of the calling thread, for what coding costs: unlike a wall
// clock it does not count the time the thread waited for a core (on a
// busy machine, most of it), and it does count page faults.

#include <time.h>

#include <cstdint>

namespace ferry {

inline uint64_t ThreadCpuNanos() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace ferry
