#pragma once
// Waits on the calling thread for a callback-style operation: the blocking
// form of an asynchronous call, written once. `start(done)` must call
// `done(T)` exactly once, on any thread, and never from inside this thread's
// own wait (a callback that needs this thread to run would never come).

#include <future>
#include <utility>

namespace ferry {

template <typename T, typename Start>
T AwaitCallback(Start start) {
  std::promise<T> p;
  auto f = p.get_future();
  start([&p](T r) { p.set_value(std::move(r)); });
  return f.get();
}

}  // namespace ferry
