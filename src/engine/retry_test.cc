#include "engine/retry.h"

#include <gtest/gtest.h>

namespace ferry {
namespace {

using std::chrono::milliseconds;

TEST(Retry, RetriesOnlyRetryableClassesWithinBudget) {
  RetryPolicy p;
  p.max_attempts = 3;
  struct Case {
    Status s;
    int attempt;
    bool retry;
  } cases[] = {
      {Status::Network("reset"), 1, true},
      {Status::Network("reset"), 3, false},
      {Status(ErrorCode::kThrottled, "slow down"), 2, true},
      {Status(ErrorCode::kServerError, "500"), 1, true},
      {Status::Timeout("t"), 1, true},
      {Status::NotFound("k"), 1, false},
      {Status::AccessDenied("d"), 1, false},
      {Status::Network("tls").set_retryable(false), 1, false},
      {Status::InvalidArgument("RequestTimeout").set_retryable(true), 1, true},
      {Status::Ok(), 1, false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ShouldRetry(p, c.s, c.attempt), c.retry) << c.s.ToString() << " @" << c.attempt;
  }
}

TEST(Retry, BackoffIsCappedJitteredAndHonoursRetryAfter) {
  RetryPolicy p;
  p.base = milliseconds(100);
  p.cap = milliseconds(1000);
  Status s = Status::Network("x");
  EXPECT_EQ(BackoffDelay(p, s, 1, 0.999).count(), 99);
  EXPECT_EQ(BackoffDelay(p, s, 3, 0.5).count(), 200);
  EXPECT_EQ(BackoffDelay(p, s, 10, 0.5).count(), 500);  // capped at 1000 * 0.5
  EXPECT_EQ(BackoffDelay(p, s, 1, 0.0).count(), 0);
  Status hinted = Status(ErrorCode::kThrottled, "slow").set_retry_after(milliseconds(2000));
  EXPECT_EQ(BackoffDelay(p, hinted, 1, 0.1).count(), 2000);
  Status huge = Status(ErrorCode::kThrottled, "slow").set_retry_after(milliseconds(999'999));
  EXPECT_EQ(BackoffDelay(p, huge, 1, 0.1), p.max_retry_after);
}

}  // namespace
}  // namespace ferry
