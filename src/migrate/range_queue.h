#pragma once
// The work of threads that share key ranges (the migrate lister's shards,
// verify's ranges): ranges waiting to be worked on, ranges being worked on,
// and which of those an idle thread may split (work stealing), so one huge
// range does not keep the others' threads idle.
//
// `Item` is a range with its own mutex `mu`, and `int SplitScore() const`,
// called with `mu` held: 0 when it must not be split now, else how much it
// is worth splitting (the busiest first). The queue only try-locks an
// item's mutex, so an item's owner may hold it while calling the queue.
//
// Thread-safe.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"

namespace ferry::migrate {

template <class Item>
class RangeQueue {
 public:
  struct Next {
    enum class Kind { kWork, kSplit, kDone };
    Kind kind = Kind::kDone;
    std::shared_ptr<Item> item;  // kWork: to work on; kSplit: to split
  };

  void Push(std::shared_ptr<Item> item) {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(item));
    cv_.notify_all();
  }

  // Blocks until there is a range to work on, a range another thread works
  // on that is worth splitting (when `may_split` and nothing waits), or the
  // work is over (everything done, failed, or aborted).
  Next Take(bool may_split) {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (failed_ || !abort_.empty()) return {};
      if (!queue_.empty()) {
        Next n{Next::Kind::kWork, queue_.front()};
        queue_.pop_front();
        active_.push_back(n.item);
        return n;
      }
      if (active_.empty() && splitting_.empty()) return {};
      if (may_split) {
        if (auto v = VictimLocked()) {
          splitting_.insert(v.get());
          return {Next::Kind::kSplit, std::move(v)};
        }
      }
      // Woken by progress (a victim may have appeared), a push, or an end.
      cv_.wait_for(lock, std::chrono::milliseconds(200));
    }
  }

  // The item taken with kWork is finished (or abandoned).
  void Done(const std::shared_ptr<Item>& item) {
    std::lock_guard<std::mutex> lock(mu_);
    active_.erase(std::remove(active_.begin(), active_.end(), item), active_.end());
    cv_.notify_all();
  }
  // The item taken with kSplit was looked at (split or not).
  void SplitDone(const std::shared_ptr<Item>& item) {
    std::lock_guard<std::mutex> lock(mu_);
    splitting_.erase(item.get());
    cv_.notify_all();
  }
  // Work advanced: a thread waiting may find a victim now.
  void Progress() { cv_.notify_all(); }
  void Fail(const Status& s) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failed_) error_ = s;
    failed_ = true;
    cv_.notify_all();
  }
  // Stops every thread for a reason that is not an error (a server broke
  // a promise: the caller goes another way).
  void Abort(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    if (abort_.empty()) abort_ = why;
    cv_.notify_all();
  }

  bool stopped() {
    std::lock_guard<std::mutex> lock(mu_);
    return failed_ || !abort_.empty();
  }
  Status error() {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }
  std::string aborted() {  // "" unless Abort was called
    std::lock_guard<std::mutex> lock(mu_);
    return abort_;
  }

 private:
  std::shared_ptr<Item> VictimLocked() {
    std::shared_ptr<Item> best;
    int best_score = 0;
    for (const auto& item : active_) {
      if (splitting_.count(item.get()) > 0) continue;
      // An item busy (its owner holds it) is looked at next time.
      std::unique_lock<std::mutex> held(item->mu, std::try_to_lock);
      if (!held.owns_lock()) continue;
      int score = item->SplitScore();
      if (score > best_score) {
        best = item;
        best_score = score;
      }
    }
    return best;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Item>> queue_;    // guarded by mu_
  std::vector<std::shared_ptr<Item>> active_;  // guarded by mu_
  std::set<Item*> splitting_;                  // guarded by mu_
  bool failed_ = false;                        // guarded by mu_
  Status error_;                               // guarded by mu_
  std::string abort_;                          // guarded by mu_
};

}  // namespace ferry::migrate
