// JobRates: rates over the window from committed counters, ETAs only when
// they can be told, one chart point per interval, the pool's total, and
// jobs forgotten after the history's span.
#include "cli/job_rates.h"

#include <gtest/gtest.h>

namespace ferry::cli {
namespace {

state::JobRecord Job(const std::string& id, state::JobState st, int64_t transferred,
                     int64_t skipped, int64_t bytes, int64_t pending, bool listing_done) {
  state::JobRecord j;
  j.id = id;
  j.state = st;
  j.counters.transferred = transferred;
  j.counters.skipped = skipped;
  j.counters.bytes = bytes;
  j.counters.pending = pending;
  j.listing_done = listing_done;
  return j;
}

TEST(EtaSecondsTest, KnownOnlyOnceListedAndMoving) {
  EXPECT_FALSE(EtaSeconds(false, 100, 10).has_value());
  EXPECT_FALSE(EtaSeconds(true, 100, 0).has_value());
  EXPECT_DOUBLE_EQ(*EtaSeconds(true, 100, 10), 10.0);
  EXPECT_DOUBLE_EQ(*EtaSeconds(true, 0, 0), 0.0);
}

TEST(JobRatesTest, RatesSpanTheWindowAndEtaFollows) {
  JobRates r(/*window_ms=*/10'000, /*point_ms=*/5'000, /*history_ms=*/60'000);
  const auto running = state::JobState::kRunning;
  r.Observe({Job("a", running, 0, 0, 0, 1000, false)}, 1'000);
  EXPECT_EQ(r.RateOf("a").objects_per_s, 0);  // one observation: no rate yet
  r.Observe({Job("a", running, 50, 50, 1'000'000, 900, false)}, 3'000);
  EXPECT_DOUBLE_EQ(r.RateOf("a").objects_per_s, 50.0);  // 100 keys in 2 s
  EXPECT_DOUBLE_EQ(r.RateOf("a").bytes_per_s, 500'000.0);
  EXPECT_FALSE(r.RateOf("a").eta_s.has_value());  // still listing
  r.Observe({Job("a", running, 200, 100, 3'000'000, 700, true)}, 7'000);
  EXPECT_DOUBLE_EQ(r.RateOf("a").objects_per_s, 50.0);  // 300 keys in 6 s
  EXPECT_DOUBLE_EQ(*r.RateOf("a").eta_s, 14.0);         // 700 left at 50/s
  // Past the window the oldest observations drop out: 11 s to 21 s.
  r.Observe({Job("a", running, 400, 100, 5'000'000, 500, true)}, 11'000);
  r.Observe({Job("a", running, 1400, 100, 6'000'000, 0, true)}, 21'000);
  EXPECT_DOUBLE_EQ(r.RateOf("a").objects_per_s, 100.0);
  EXPECT_DOUBLE_EQ(*r.RateOf("a").eta_s, 0.0);
  // A job that stopped has no rate.
  r.Observe({Job("a", state::JobState::kCompleted, 1500, 100, 6'000'000, 0, true)}, 22'000);
  EXPECT_EQ(r.RateOf("a").objects_per_s, 0);
  EXPECT_EQ(r.RateOf("nosuch").objects_per_s, 0);
}

TEST(JobRatesTest, OnePointPerIntervalSummedOverJobsAndForgottenAfterTheHistory) {
  JobRates r(10'000, 5'000, 20'000);
  const auto running = state::JobState::kRunning;
  for (int64_t t = 0; t <= 20'000; t += 1'000) {
    r.Observe(
        {Job("a", running, t / 100, 0, t, 10, true), Job("b", running, t / 50, 0, 0, 10, true)}, t);
  }
  auto h = r.History("a");
  ASSERT_EQ(h.size(), 4u);  // at 5, 10, 15 and 20 s (0 s is past the history)
  EXPECT_EQ(h.front().t_ms, 5'000);
  EXPECT_DOUBLE_EQ(h.back().objects_per_s, 10.0);
  EXPECT_DOUBLE_EQ(h.back().bytes_per_s, 1000.0);
  auto total = r.Total();
  ASSERT_EQ(total.size(), 4u);
  EXPECT_DOUBLE_EQ(total.back().objects_per_s, 30.0);  // 10/s + 20/s
  // "b" gone from the store (archived): forgotten after the history.
  r.Observe({Job("a", running, 300, 0, 30'000, 10, true)}, 30'000);
  EXPECT_FALSE(r.History("b").empty());
  r.Observe({Job("a", running, 300, 0, 30'000, 10, true)}, 41'000);
  EXPECT_TRUE(r.History("b").empty());
}

}  // namespace
}  // namespace ferry::cli
