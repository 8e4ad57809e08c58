#pragma once
// One piece of work per key at a time, its result shared by everyone who
// asked while it ran (Go's singleflight, nginx's proxy_cache_lock, Varnish's
// busy objects). The cache uses it to turn concurrent misses for one key
// into one origin fetch; volumes use it so concurrent triggers for one chunk
// share one fetch.
//
//   SingleFlight<std::string, std::shared_ptr<const T>> flights;
//   auto [value, led] = flights.Do(key, [&] { return Fetch(key); });
//
// Do() runs `work` on the calling thread when no call for `key` is in
// flight (led == true); otherwise it blocks until that call finishes and
// returns a copy of its result (led == false). A call that starts after
// the leader finished runs again: nothing is remembered. `work` must not
// call Do() for the same key. Thread-safe.

#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

namespace ferry {

template <typename Key, typename Value>
class SingleFlight {
 public:
  template <typename Work>
  std::pair<Value, bool> Do(const Key& key, Work&& work) {
    std::shared_ptr<Call> call;
    {
      std::unique_lock lock(mu_);
      auto it = calls_.find(key);
      if (it != calls_.end()) {
        call = it->second;
        ++call->waiters;
        call->done_cv.wait(lock, [&] { return call->done; });
        return {*call->value, false};
      }
      call = std::make_shared<Call>();
      calls_.emplace(key, call);
    }
    // Publish whatever happens: an exception must not leave waiters asleep.
    struct Finish {
      SingleFlight* self;
      const Key& key;
      std::shared_ptr<Call>& call;
      ~Finish() {
        std::lock_guard lock(self->mu_);
        if (!call->value) call->value.emplace();  // work threw: waiters get Value{}
        call->done = true;
        self->calls_.erase(key);
        call->done_cv.notify_all();
      }
    } finish{this, key, call};
    Value v = work();
    {
      std::lock_guard lock(mu_);
      call->value.emplace(v);
    }
    return {std::move(v), true};
  }

  // Callers waiting on `key`'s flight right now (for tests and metrics).
  int Waiters(const Key& key) const {
    std::lock_guard lock(mu_);
    auto it = calls_.find(key);
    return it == calls_.end() ? 0 : it->second->waiters;
  }

 private:
  struct Call {
    std::condition_variable done_cv;
    bool done = false;
    int waiters = 0;
    std::optional<Value> value;
  };
  mutable std::mutex mu_;
  std::unordered_map<Key, std::shared_ptr<Call>> calls_;  // guarded by mu_
};

}  // namespace ferry
