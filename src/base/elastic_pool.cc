#include "base/elastic_pool.h"

namespace ferry {

ElasticPool::ElasticPool(size_t max_threads, std::chrono::milliseconds idle)
    : max_threads_(max_threads == 0 ? 1 : max_threads), idle_(idle) {}

ElasticPool::~ElasticPool() {
  std::unique_lock lock(mu_);
  stop_ = true;
  work_cv_.notify_all();
  gone_cv_.wait(lock, [&] { return running_ == 0; });
  ReapLocked();
}

size_t ElasticPool::threads() const {
  std::lock_guard lock(mu_);
  return running_;
}

size_t ElasticPool::idle() const {
  std::lock_guard lock(mu_);
  return waiting_;
}

void ElasticPool::ReapLocked() {
  for (const std::thread::id& id : ended_) {
    auto it = all_.find(id);
    if (it == all_.end()) continue;
    it->second.join();  // it has left Run: the rest of its exit needs no lock
    all_.erase(it);
  }
  ended_.clear();
}

bool ElasticPool::Submit(std::function<void()> task) {
  std::lock_guard lock(mu_);
  ReapLocked();
  queue_.push_back(std::move(task));
  if (waiting_ > queue_.size() - 1) {
    work_cv_.notify_one();
    return true;
  }
  if (running_ < max_threads_) {
    try {
      std::thread t([this] { Run(); });
      all_.emplace(t.get_id(), std::move(t));
      ++running_;
    } catch (...) {
      if (running_ == 0) {  // nobody will ever take it
        queue_.pop_back();
        return false;
      }
    }
  }
  return true;
}

void ElasticPool::Run() {
  std::unique_lock lock(mu_);
  for (;;) {
    if (queue_.empty() && !stop_) {
      ++waiting_;
      bool woken = work_cv_.wait_for(lock, idle_, [&] { return !queue_.empty() || stop_; });
      --waiting_;
      if (!woken) break;  // idle too long
    }
    if (queue_.empty()) break;  // stopping, nothing left
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task();
    task = nullptr;  // its captures go before the lock is taken again
    lock.lock();
  }
  --running_;
  ended_.push_back(std::this_thread::get_id());
  gone_cv_.notify_all();
}

}  // namespace ferry
