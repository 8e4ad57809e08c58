#pragma once
// Listing one page with the retries a long listing needs: a bounded number
// for transient errors, and for as long as it takes during an outage (the
// store not answering at all), so an outage never ends a job; retryable
// errors wait with backoff and jitter. Shared by the migrate lister and
// verify.

#include <functional>

#include "base/status.h"
#include "store/object_store.h"

namespace ferry::migrate {

// `stopped` is polled while waiting; once it says true the last result is
// returned at once.
Result<ListPage> ListWithRetry(ObjectStore& store, const ListOptions& o,
                               const std::function<bool()>& stopped);

}  // namespace ferry::migrate
