#pragma once
// A thread pool with a bound on both its threads and its queue, for work
// that blocks (an upstream exchange that streams a large body into a
// spool). Threads start when work arrives and none is idle, up to
// max_threads, and stay; work beyond them waits in a queue of at most
// max_queue; past that, TrySubmit refuses and the caller answers for it
// (the cache gives 503 with Retry-After). So a burst of a thousand misses
// costs max_threads threads, never a thread each.
//
// Thread-safe. The destructor runs what is queued, then joins.

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ferry::engine {

struct BoundedPoolStats {
  size_t threads = 0;   // started so far (never more than max_threads)
  size_t running = 0;   // tasks running now
  size_t queued = 0;    // tasks waiting for a thread
  uint64_t rejected = 0;  // TrySubmit calls refused, ever
};

class BoundedPool {
 public:
  BoundedPool(size_t max_threads, size_t max_queue);
  ~BoundedPool();
  BoundedPool(const BoundedPool&) = delete;
  BoundedPool& operator=(const BoundedPool&) = delete;

  // Runs `task` on a pool thread, at once or after what is queued before
  // it. False (and `task` dropped unrun) when every thread is busy and the
  // queue is full.
  bool TrySubmit(std::function<void()> task);
  BoundedPoolStats Stats() const;

 private:
  void Work();

  const size_t max_threads_;
  const size_t max_queue_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  std::vector<std::thread> threads_;         // guarded by mu_
  size_t idle_ = 0;                          // guarded by mu_
  size_t running_ = 0;                       // guarded by mu_
  uint64_t rejected_ = 0;                    // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
};

}  // namespace ferry::engine
