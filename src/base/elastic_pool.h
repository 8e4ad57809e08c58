#pragma once
// Runs tasks on threads kept for reuse (Varnish's thread pools): a task goes
// to an idle thread, or to a new one while fewer than `max_threads` run, or
// else waits its turn, in order. A thread idle for `idle` ends. For work
// that blocks (a fetch, a sync) and comes in bursts: a burst gets the
// threads it needs at once, and the next one finds them, and their
// thread-local state (a zstd context), still there, where a thread per task
// would pay for a clone, a stack and an exit each time.
//
// Tasks must not wait for tasks queued behind them in the same pool (give
// such work a pool of its own). A thread that ended is joined at the next
// Submit or at destruction. Thread-safe.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace ferry {

class ElasticPool {
 public:
  ElasticPool(size_t max_threads, std::chrono::milliseconds idle);
  // Runs what is queued, then joins every thread.
  ~ElasticPool();
  ElasticPool(const ElasticPool&) = delete;
  ElasticPool& operator=(const ElasticPool&) = delete;

  // false (the task not taken: the caller runs it) only when no thread
  // runs and none could be started.
  bool Submit(std::function<void()> task);

  size_t threads() const;  // running now, idle or busy
  size_t idle() const;     // of those, waiting for a task

 private:
  void Run();
  // Joins threads that ended; with mu_ held (they no longer need it).
  void ReapLocked();

  const size_t max_threads_;
  const std::chrono::milliseconds idle_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_, gone_cv_;
  std::deque<std::function<void()>> queue_;     // guarded by mu_
  std::map<std::thread::id, std::thread> all_;  // guarded by mu_
  std::vector<std::thread::id> ended_;          // guarded by mu_: to join
  size_t running_ = 0, waiting_ = 0;            // guarded by mu_: threads; of those idle
  bool stop_ = false;                           // guarded by mu_
};

}  // namespace ferry
