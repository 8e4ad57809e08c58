#pragma once
// Runs tasks 0..n-1 on up to `concurrency` threads. After the first failure
// no new task starts; tasks already running finish. Returns the first error
// (by time), or OK when every task succeeded.

#include <functional>

#include "base/status.h"

namespace ferry {

Status RunParallel(int n, int concurrency, const std::function<Status(int)>& task);

}  // namespace ferry
