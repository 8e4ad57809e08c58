#include "engine/circuit_breaker.h"

#include <algorithm>

namespace ferry {
namespace {

CircuitOptions Sanitize(CircuitOptions o) {
  using std::chrono::milliseconds;
  o.failure_threshold = std::max(1, o.failure_threshold);
  o.open_for = std::max(milliseconds(0), o.open_for);
  o.max_open_for = std::max(o.open_for, o.max_open_for);
  o.probe_timeout = std::max(milliseconds(0), o.probe_timeout);
  return o;
}

}  // namespace

const char* ToString(CircuitState s) {
  switch (s) {
    case CircuitState::kClosed:
      return "closed";
    case CircuitState::kOpen:
      return "open";
    case CircuitState::kHalfOpen:
      return "half-open";
  }
  return "unknown";
}

bool IsOutageError(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kNetwork:
    case ErrorCode::kTimeout:
    case ErrorCode::kServerError:
      return true;
    default:
      return false;
  }
}

CircuitBreaker::CircuitBreaker(CircuitOptions o) : opt_(Sanitize(o)), wait_(opt_.open_for) {}

bool CircuitBreaker::Allow(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  switch (state_) {
    case CircuitState::kClosed:
      return true;
    case CircuitState::kOpen:
      if (now - opened_at_ < wait_) return false;
      state_ = CircuitState::kHalfOpen;
      break;
    case CircuitState::kHalfOpen:
      if (probe_out_ && now - probe_started_ < opt_.probe_timeout) return false;
      break;
  }
  probe_out_ = true;
  probe_started_ = now;
  return true;
}

bool CircuitBreaker::WouldAllow(Clock::time_point now) const {
  std::lock_guard<std::mutex> lock(mu_);
  switch (state_) {
    case CircuitState::kClosed:
      return true;
    case CircuitState::kOpen:
      return now - opened_at_ >= wait_;
    case CircuitState::kHalfOpen:
      return !probe_out_ || now - probe_started_ >= opt_.probe_timeout;
  }
  return false;
}

void CircuitBreaker::OnSuccess(Clock::time_point /*now*/) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ == CircuitState::kOpen) return;
  state_ = CircuitState::kClosed;
  failures_ = 0;
  wait_ = opt_.open_for;
  probe_out_ = false;
}

void CircuitBreaker::OnFailure(const Status& s, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!IsOutageError(s)) {
    if (state_ == CircuitState::kHalfOpen) probe_out_ = false;
    return;
  }
  switch (state_) {
    case CircuitState::kClosed:
      if (++failures_ < opt_.failure_threshold) return;
      ++opens_;
      wait_ = opt_.open_for;
      break;
    case CircuitState::kOpen:
      return;  // a request sent before it opened; the wait stands
    case CircuitState::kHalfOpen:
      wait_ = std::min(wait_ * 2, opt_.max_open_for);
      break;
  }
  state_ = CircuitState::kOpen;
  opened_at_ = now;
  failures_ = 0;
  probe_out_ = false;
}

CircuitState CircuitBreaker::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

uint64_t CircuitBreaker::opens() const {
  std::lock_guard<std::mutex> lock(mu_);
  return opens_;
}

}  // namespace ferry
