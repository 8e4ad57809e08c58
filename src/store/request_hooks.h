#pragma once
// Per-request hooks a remote store calls around every attempt of every
// request (retries included), so the layers above it can pace an endpoint
// (requests/s, adaptive concurrency) and watch its health (circuit breaker)
// without the store knowing about them. Both calls come from the thread that
// makes the request; implementations must be thread-safe.

#include "base/status.h"

namespace ferry {

class RequestHooks {
 public:
  virtual ~RequestHooks() = default;
  // Before the request is signed and sent; may block (rate limiting).
  virtual void BeforeRequest() {}
  // With the attempt's outcome: OK, or the classified error (an HTTP error
  // answer or a transport failure).
  virtual void AfterRequest(const Status& result) {}
};

}  // namespace ferry
