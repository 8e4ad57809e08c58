#include "engine/parallel.h"

#include "base/cancel.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace ferry {

Status RunParallel(int n, int concurrency, const std::function<Status(int)>& task) {
  std::atomic<int> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  Status first;
  auto worker = [&] {
    for (;;) {
      if (failed.load()) return;
      int i = next.fetch_add(1);
      if (i >= n) return;
      Status s = CancelRequested() ? CancelledStatus() : task(i);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (!failed.exchange(true)) first = s;
        return;
      }
    }
  };
  int threads = std::clamp(concurrency, 1, std::max(1, n));
  if (threads == 1) {
    worker();
    return first;
  }
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (int i = 0; i < threads; ++i) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return first;
}

}  // namespace ferry
