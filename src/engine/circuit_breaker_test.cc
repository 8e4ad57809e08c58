#include "engine/circuit_breaker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace ferry {
namespace {

using std::chrono::milliseconds;
using Clock = CircuitBreaker::Clock;

CircuitOptions CircuitOpts(int threshold = 3) {
  CircuitOptions o;
  o.failure_threshold = threshold;
  o.open_for = milliseconds(1000);
  o.max_open_for = milliseconds(5000);
  o.probe_timeout = milliseconds(30000);
  return o;
}

const Status kDown = Status::Network("connection refused");

TEST(CircuitBreaker, OutageErrorsTable) {
  struct Case {
    ErrorCode code;
    bool outage;
  } cases[] = {
      {ErrorCode::kOk, false},
      {ErrorCode::kInvalidArgument, false},
      {ErrorCode::kNotFound, false},
      {ErrorCode::kAccessDenied, false},
      {ErrorCode::kAlreadyExists, false},
      {ErrorCode::kPreconditionFailed, false},
      {ErrorCode::kUnsupported, false},
      {ErrorCode::kIoError, false},  // local, e.g. ENOSPC
      {ErrorCode::kNetwork, true},
      {ErrorCode::kTimeout, true},
      {ErrorCode::kThrottled, false},  // the Pacer's job
      {ErrorCode::kServerError, true},
      {ErrorCode::kCorruption, false},
      {ErrorCode::kProtocol, false},
      {ErrorCode::kCancelled, false},
      {ErrorCode::kInternal, false},
  };
  for (const auto& c : cases) {
    Status s = c.code == ErrorCode::kOk ? Status::Ok() : Status(c.code, "x");
    EXPECT_EQ(IsOutageError(s), c.outage) << ErrorCodeName(c.code);
  }
}

TEST(CircuitBreaker, StateNames) {
  EXPECT_STREQ(ToString(CircuitState::kClosed), "closed");
  EXPECT_STREQ(ToString(CircuitState::kOpen), "open");
  EXPECT_STREQ(ToString(CircuitState::kHalfOpen), "half-open");
}

TEST(CircuitBreaker, OpensAfterThresholdConsecutiveOutages) {
  CircuitBreaker c(CircuitOpts(3));
  Clock::time_point t{};
  EXPECT_TRUE(c.Allow(t));
  c.OnFailure(kDown, t);
  c.OnFailure(Status::Timeout("t"), t);
  EXPECT_EQ(c.state(), CircuitState::kClosed);
  EXPECT_TRUE(c.Allow(t));
  c.OnFailure(Status(ErrorCode::kServerError, "500"), t);
  EXPECT_EQ(c.state(), CircuitState::kOpen);
  EXPECT_EQ(c.opens(), 1u);
  EXPECT_FALSE(c.Allow(t));
  EXPECT_FALSE(c.Allow(t + milliseconds(999)));
}

TEST(CircuitBreaker, SuccessBetweenFailuresResetsCount) {
  CircuitBreaker c(CircuitOpts(3));
  Clock::time_point t{};
  for (int round = 0; round < 5; ++round) {
    c.OnFailure(kDown, t);
    c.OnFailure(kDown, t);
    c.OnSuccess(t);
  }
  EXPECT_EQ(c.state(), CircuitState::kClosed);
  EXPECT_EQ(c.opens(), 0u);
}

TEST(CircuitBreaker, NonOutageErrorsNeverOpenNorReset) {
  CircuitBreaker c(CircuitOpts(2));
  Clock::time_point t{};
  for (int i = 0; i < 100; ++i) {
    c.OnFailure(Status::AccessDenied("no"), t);
    c.OnFailure(Status::NotFound("k"), t);
    c.OnFailure(Status(ErrorCode::kThrottled, "slow down"), t);
    c.OnFailure(Status::IoError("ENOSPC"), t);
  }
  EXPECT_EQ(c.state(), CircuitState::kClosed);
  c.OnFailure(kDown, t);
  c.OnFailure(Status::NotFound("k"), t);  // neither counts nor resets
  c.OnFailure(kDown, t);
  EXPECT_EQ(c.state(), CircuitState::kOpen);
}

TEST(CircuitBreaker, HalfOpenLetsExactlyOneProbeAndSuccessCloses) {
  CircuitBreaker c(CircuitOpts(1));
  Clock::time_point t{};
  c.OnFailure(kDown, t);
  ASSERT_EQ(c.state(), CircuitState::kOpen);
  t += milliseconds(1000);
  EXPECT_TRUE(c.Allow(t));  // the probe
  EXPECT_EQ(c.state(), CircuitState::kHalfOpen);
  EXPECT_FALSE(c.Allow(t));
  EXPECT_FALSE(c.Allow(t + milliseconds(500)));
  c.OnSuccess(t + milliseconds(600));
  EXPECT_EQ(c.state(), CircuitState::kClosed);
  EXPECT_TRUE(c.Allow(t + milliseconds(600)));
  EXPECT_TRUE(c.Allow(t + milliseconds(600)));
  EXPECT_EQ(c.opens(), 1u);
}

TEST(CircuitBreaker, FailedProbeDoublesWaitUpToMax) {
  CircuitBreaker c(CircuitOpts(1));  // open_for 1 s, max 5 s
  Clock::time_point t{};
  c.OnFailure(kDown, t);
  const int64_t expected_waits[] = {1000, 2000, 4000, 5000, 5000};
  for (int64_t wait : expected_waits) {
    EXPECT_FALSE(c.Allow(t + milliseconds(wait - 1))) << wait;
    t += milliseconds(wait);
    ASSERT_TRUE(c.Allow(t)) << wait;
    c.OnFailure(kDown, t);  // the probe fails
    EXPECT_EQ(c.state(), CircuitState::kOpen);
  }
  EXPECT_EQ(c.opens(), 1u);  // re-opens from half-open are not new opens
  // A successful probe resets the wait to open_for.
  t += milliseconds(5000);
  ASSERT_TRUE(c.Allow(t));
  c.OnSuccess(t);
  c.OnFailure(kDown, t);
  EXPECT_EQ(c.opens(), 2u);
  EXPECT_FALSE(c.Allow(t + milliseconds(999)));
  EXPECT_TRUE(c.Allow(t + milliseconds(1000)));
}

TEST(CircuitBreaker, LateResultsWhileOpenAreIgnored) {
  CircuitBreaker c(CircuitOpts(1));
  Clock::time_point t{};
  c.OnFailure(kDown, t);
  c.OnSuccess(t + milliseconds(10));          // sent before it opened
  c.OnFailure(kDown, t + milliseconds(900));  // does not push the probe back
  EXPECT_EQ(c.state(), CircuitState::kOpen);
  EXPECT_TRUE(c.Allow(t + milliseconds(1000)));
}

TEST(CircuitBreaker, NonOutageProbeResultFreesTheProbeSlot) {
  CircuitBreaker c(CircuitOpts(1));
  Clock::time_point t{};
  c.OnFailure(kDown, t);
  t += milliseconds(1000);
  ASSERT_TRUE(c.Allow(t));
  c.OnFailure(Status::NotFound("gone"), t);
  EXPECT_EQ(c.state(), CircuitState::kHalfOpen);
  EXPECT_TRUE(c.Allow(t));  // a new probe
  EXPECT_FALSE(c.Allow(t));
}

TEST(CircuitBreaker, LostProbeIsReplacedAfterProbeTimeout) {
  CircuitBreaker c(CircuitOpts(1));
  Clock::time_point t{};
  c.OnFailure(kDown, t);
  t += milliseconds(1000);
  ASSERT_TRUE(c.Allow(t));
  EXPECT_FALSE(c.Allow(t + milliseconds(29999)));
  EXPECT_TRUE(c.Allow(t + milliseconds(30000)));
}

TEST(CircuitBreaker, ConcurrentCallersGetOneProbe) {
  CircuitBreaker c(CircuitOpts(1));
  Clock::time_point t{};
  c.OnFailure(kDown, t);
  const Clock::time_point later = t + milliseconds(1000);
  std::atomic<int> allowed{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 100; ++j) allowed += c.Allow(later) ? 1 : 0;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(allowed.load(), 1);
}

TEST(CircuitBreaker, ThreadSafetySmoke) {
  CircuitOptions o = CircuitOpts(3);
  o.open_for = milliseconds(0);
  CircuitBreaker c(o);
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&c, i] {
      for (int j = 0; j < 2000; ++j) {
        if (c.Allow()) {
          if ((i + j) % 3 == 0) {
            c.OnSuccess();
          } else {
            c.OnFailure(kDown);
          }
        }
        (void)c.state();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_GE(c.opens(), 1u);
  c.OnSuccess();  // closes it unless open; then a probe and a success do
  if (c.state() == CircuitState::kOpen) {
    ASSERT_TRUE(c.Allow());  // open_for 0: probe at once
    c.OnSuccess();
  }
  EXPECT_EQ(c.state(), CircuitState::kClosed);
}

}  // namespace
}  // namespace ferry

namespace ferry {
namespace {

TEST(CircuitBreakerTest, WouldAllowTakesNoProbe) {
  CircuitOptions o;
  o.failure_threshold = 1;
  o.open_for = std::chrono::milliseconds(100);
  CircuitBreaker c(o);
  auto t0 = CircuitBreaker::Clock::time_point{} + std::chrono::hours(1);
  EXPECT_TRUE(c.WouldAllow(t0));
  c.OnFailure(Status::Network("down"), t0);
  EXPECT_FALSE(c.WouldAllow(t0 + std::chrono::milliseconds(50)));
  auto later = t0 + std::chrono::milliseconds(150);
  EXPECT_TRUE(c.WouldAllow(later));
  EXPECT_TRUE(c.WouldAllow(later));  // asking twice takes nothing
  EXPECT_TRUE(c.Allow(later));       // the probe
  EXPECT_FALSE(c.WouldAllow(later));
  EXPECT_FALSE(c.Allow(later));
}

}  // namespace
}  // namespace ferry
