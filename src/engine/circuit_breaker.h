#pragma once
// A circuit breaker per dependency (source store, destination store, state
// store). After `failure_threshold` consecutive outage-class failures it
// opens: no new work starts, so a dead dependency is not hammered and work
// is not burnt through its retry budget while it is down. After a wait one
// probe is let through (half-open); its success closes the circuit, its
// failure re-opens it with the wait doubled (up to `max_open_for`).
//
//   closed --threshold outage failures--> open --wait passed, Allow()-->
//   half-open --OnSuccess--> closed;  half-open --outage failure--> open
//
// Throttling (kThrottled) is not an outage: the endpoint is up and the
// Pacer handles it. Thread-safe; every time is injectable for tests.

#include <chrono>
#include <cstdint>
#include <mutex>

#include "base/status.h"

namespace ferry {

struct CircuitOptions {
  int failure_threshold = 5;                      // consecutive outage failures that open it (>= 1)
  std::chrono::milliseconds open_for{1000};       // first wait before a probe
  std::chrono::milliseconds max_open_for{15000};  // waits double per failed probe up to this
  // A probe that has not reported after this long is presumed lost (its
  // work ended without telling this circuit) and another probe may start.
  std::chrono::milliseconds probe_timeout{30000};
};

enum class CircuitState { kClosed, kOpen, kHalfOpen };
// "closed", "open", "half-open".
const char* ToString(CircuitState s);

// True for errors that mean "the dependency is down": kNetwork, kTimeout,
// kServerError. Not kThrottled (overload; the Pacer's job), not local
// errors (kIoError such as ENOSPC), not answers (kNotFound, kAccessDenied...).
bool IsOutageError(const Status& s);

class CircuitBreaker {
 public:
  using Clock = std::chrono::steady_clock;

  explicit CircuitBreaker(CircuitOptions o);
  CircuitBreaker(const CircuitBreaker&) = delete;
  CircuitBreaker& operator=(const CircuitBreaker&) = delete;

  // May a new piece of work start now? Closed: yes. Open: no until the wait
  // has passed; then it turns half-open and exactly one caller gets true
  // (the probe); others get false until the probe reports (or times out).
  bool Allow(Clock::time_point now = Clock::now());
  // What Allow() would answer now, without taking the probe: lets a caller
  // gated by several circuits check them all before taking any probe.
  bool WouldAllow(Clock::time_point now = Clock::now()) const;
  // The dependency answered: closes the circuit from closed or half-open and
  // resets the failure count and the wait. Ignored while open (a late answer
  // to a request sent before it opened proves little).
  void OnSuccess(Clock::time_point now = Clock::now());
  // Counts only IsOutageError(s). A failed probe re-opens the circuit with
  // the wait doubled up to max_open_for. A non-outage failure neither counts
  // nor resets the count; if it ends the probe, another probe may start.
  void OnFailure(const Status& s, Clock::time_point now = Clock::now());

  CircuitState state() const;
  uint64_t opens() const;  // times it went closed -> open

 private:
  const CircuitOptions opt_;
  mutable std::mutex mu_;
  CircuitState state_ = CircuitState::kClosed;  // guarded by mu_
  int failures_ = 0;                            // guarded by mu_; consecutive, while closed
  std::chrono::milliseconds wait_;              // guarded by mu_; current open period
  Clock::time_point opened_at_{};               // guarded by mu_
  bool probe_out_ = false;                      // guarded by mu_; half-open only
  Clock::time_point probe_started_{};           // guarded by mu_
  uint64_t opens_ = 0;                          // guarded by mu_
};

}  // namespace ferry
