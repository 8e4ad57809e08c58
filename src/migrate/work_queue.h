#pragma once
// The runner's queue between its dispatcher and its transfers.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>

#include "state/state_store.h"

namespace ferry::migrate {

// A bounded queue of claimed objects between the dispatcher and the
// transfers, in two lines: objects for the worker threads (Pop() waits for
// one), and objects for the asynchronous route, which LaunchAsync() takes
// without waiting. The bound is on both together.
class WorkQueue {
 public:
  explicit WorkQueue(size_t capacity) : capacity_(capacity) {}
  void Push(state::ClaimedObject o) {
    std::lock_guard<std::mutex> lock(mu_);
    q_.push_back(std::move(o));
    cv_.notify_one();
  }
  // `front`: one taken a moment ago and put back (it goes next).
  void PushAsync(state::ClaimedObject o, bool front = false) {
    std::lock_guard<std::mutex> lock(mu_);
    if (front) {
      async_.push_front(std::move(o));
    } else {
      async_.push_back(std::move(o));
    }
  }
  // Blocks until an object for a thread or Close(); false when closed and
  // drained.
  bool Pop(state::ClaimedObject* out) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !q_.empty() || closed_; });
    if (q_.empty()) return false;
    *out = std::move(q_.front());
    q_.pop_front();
    Popped();
    return true;
  }
  bool TryPopAsync(state::ClaimedObject* out) {
    std::lock_guard<std::mutex> lock(mu_);
    if (async_.empty()) return false;
    *out = std::move(async_.front());
    async_.pop_front();
    Popped();
    return true;
  }
  // Room for more, waiting up to `wait` for some to appear.
  size_t Room(std::chrono::milliseconds wait) {
    std::unique_lock<std::mutex> lock(mu_);
    space_.wait_for(lock, wait, [&] { return size() < capacity_ / 2 || closed_; });
    return size() >= capacity_ ? 0 : capacity_ - size();
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    cv_.notify_all();
    space_.notify_all();
  }

 private:
  size_t size() const { return q_.size() + async_.size(); }
  // The dispatcher waits for the queue to fall below half: wake it when a
  // pop crosses that line, not on every pop (each wake-up was a context
  // switch per object for a dispatcher that went back to sleep).
  void Popped() {
    if (size() + 1 == capacity_ / 2) space_.notify_all();
  }

  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable cv_, space_;
  std::deque<state::ClaimedObject> q_;      // guarded by mu_
  std::deque<state::ClaimedObject> async_;  // guarded by mu_
  bool closed_ = false;                     // guarded by mu_
};

}  // namespace ferry::migrate
