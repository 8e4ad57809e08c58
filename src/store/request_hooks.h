#pragma once
// Per-request hooks a remote store calls around every attempt of every
// request (retries included), so the layers above it can pace an endpoint
// (requests/s, adaptive concurrency) and watch its health (circuit breaker)
// without the store knowing about them. Calls may come from any thread,
// including the store's event loop: implementations are thread-safe and
// never block.

#include <chrono>

#include "base/status.h"

namespace ferry {

class RequestHooks {
 public:
  virtual ~RequestHooks() = default;
  // Before the request is signed and sent: how long the store must wait
  // before sending it (a rate limit's reservation, already taken).
  virtual std::chrono::nanoseconds BeforeRequest() { return {}; }
  // With the attempt's outcome: OK, or the classified error (an HTTP error
  // answer or a transport failure).
  virtual void AfterRequest(const Status& result) {}
};

}  // namespace ferry
