#include "migrate/job_lifecycle.h"

#include <gtest/gtest.h>

namespace ferry::migrate {
namespace {

using state::JobState;

TEST(JobLifecycle, WhenTheMonitorEndsTheRun) {
  struct Case {
    const char* name;
    JobObservation o;
    std::optional<JobState> want;
  };
  JobObservation done;  // listed, nothing pending, this runner's listing returned
  done.listing_done = true;
  done.listing_returned = true;
  auto with = [&](auto f) {
    JobObservation o = done;
    f(o);
    return o;
  };
  const Case cases[] = {
      {"everything finished", done, JobState::kCompleted},
      {"finished with dead letters", with([](auto& o) { o.failed = 3; }), JobState::kFailed},
      {"keys still pending", with([](auto& o) { o.pending = 1; }), std::nullopt},
      {"a transfer still in flight", with([](auto& o) { o.in_flight = 1; }), std::nullopt},
      {"listing not done", with([](auto& o) { o.listing_done = false; }), std::nullopt},
      {"the store says listed but our listing has not returned",
       with([](auto& o) { o.listing_returned = false; }), std::nullopt},
      {"a runner that does not list need not wait for a listing",
       with([](auto& o) { o.lists = false; o.listing_returned = false; }), JobState::kCompleted},
      {"cancel asked", with([](auto& o) { o.state = JobState::kCancelling; o.pending = 9; }),
       JobState::kCancelled},
      {"pool: another runner completed it",
       with([](auto& o) { o.pool = true; o.state = JobState::kCompleted; o.pending = 4; }), JobState::kCompleted},
      {"pool: another runner cancelled it",
       with([](auto& o) { o.pool = true; o.state = JobState::kCancelled; }), JobState::kCancelled},
      {"not in a pool, a final state in the store is not another runner's",
       with([](auto& o) { o.state = JobState::kCompleted; o.pending = 4; }), std::nullopt},
  };
  for (const Case& c : cases) EXPECT_EQ(DecideJobEnd(c.o), c.want) << c.name;
}

TEST(JobLifecycle, WhatIsRecordedAfterTheRun) {
  struct Case {
    const char* name;
    bool taken_over, pool;
    std::optional<JobState> ended;
    Ending::Kind kind;
    JobState record;
    bool archive;
  };
  const Case cases[] = {
      {"taken over", true, false, std::nullopt, Ending::Kind::kNothing, JobState::kInterrupted, false},
      {"taken over in a pool", true, true, JobState::kCompleted, Ending::Kind::kNothing, JobState::kInterrupted,
       false},
      {"stopped early", false, false, std::nullopt, Ending::Kind::kRecordState, JobState::kInterrupted, false},
      {"stopped early in a pool", false, true, std::nullopt, Ending::Kind::kLeaveToPool, JobState::kInterrupted,
       false},
      {"completed", false, false, JobState::kCompleted, Ending::Kind::kRecordState, JobState::kCompleted, true},
      {"failed in a pool", false, true, JobState::kFailed, Ending::Kind::kRecordState, JobState::kFailed, true},
      {"cancelled", false, false, JobState::kCancelled, Ending::Kind::kRecordState, JobState::kCancelled, true},
  };
  for (const Case& c : cases) {
    Ending e = DecideEnding(c.taken_over, c.pool, c.ended);
    EXPECT_EQ(e.kind, c.kind) << c.name;
    if (e.kind == Ending::Kind::kRecordState) {
      EXPECT_EQ(e.record, c.record) << c.name;
      EXPECT_EQ(e.archive, c.archive) << c.name;
    }
  }
}

}  // namespace
}  // namespace ferry::migrate
