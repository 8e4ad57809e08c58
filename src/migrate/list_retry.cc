#include "migrate/list_retry.h"

#include <chrono>
#include <random>
#include <thread>

#include "engine/circuit_breaker.h"
#include "engine/retry.h"

namespace ferry::migrate {

Result<ListPage> ListWithRetry(ObjectStore& store, const ListOptions& o,
                               const std::function<bool()>& stopped) {
  RetryPolicy policy;
  policy.cap = std::chrono::milliseconds(5000);
  std::mt19937_64 rng{std::random_device{}()};
  for (int attempt = 1;; ++attempt) {
    auto page = store.List(o);
    if (page.ok() || stopped()) return page;
    const Status& s = page.status();
    bool outage = IsOutageError(s);
    if (!s.retryable() || (!outage && attempt >= 10)) return s;
    double r = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    auto until = std::chrono::steady_clock::now() + BackoffDelay(policy, s, std::min(attempt, 8), r);
    while (!stopped() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
}

}  // namespace ferry::migrate
