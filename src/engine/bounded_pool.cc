#include "engine/bounded_pool.h"

#include <algorithm>
#include <utility>

namespace ferry::engine {

BoundedPool::BoundedPool(size_t max_threads, size_t max_queue)
    : max_threads_(std::max<size_t>(1, max_threads)), max_queue_(max_queue) {}

BoundedPool::~BoundedPool() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    threads.swap(threads_);
  }
  cv_.notify_all();
  for (auto& t : threads) t.join();
}

bool BoundedPool::TrySubmit(std::function<void()> task) {
  std::unique_lock lock(mu_);
  // Work already queued counts against the idle threads that will take it.
  const size_t free_threads = idle_ > queue_.size() ? idle_ - queue_.size() : 0;
  if (free_threads == 0) {
    if (threads_.size() < max_threads_) {
      threads_.emplace_back([this] { Work(); });
      ++idle_;  // counted idle until it takes its first task
    } else if (queue_.size() >= max_queue_ + idle_) {
      ++rejected_;
      return false;
    }
  }
  queue_.push_back(std::move(task));
  lock.unlock();
  cv_.notify_one();
  return true;
}

void BoundedPool::Work() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left to run
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    --idle_;
    ++running_;
    lock.unlock();
    task();
    task = nullptr;  // what it holds goes before the pool counts it idle
    lock.lock();
    --running_;
    ++idle_;
  }
}

BoundedPoolStats BoundedPool::Stats() const {
  std::lock_guard lock(mu_);
  return {threads_.size(), running_, queue_.size() > idle_ ? queue_.size() - idle_ : 0, rejected_};
}

}  // namespace ferry::engine
