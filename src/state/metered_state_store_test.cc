// MeteredStateStore counts every call it passes on, and the time spent in
// them, and changes nothing about the answers.

#include "state/metered_state_store.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

namespace ferry::state {
namespace {

TEST(MeteredStateStore, CountsCallsAndTimeAndPassesAnswersThrough) {
  std::string dir = (std::filesystem::temp_directory_path() / "ferry-metered-XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  {
    auto inner = OpenSqliteStateStore(dir + "/state.db");
    ASSERT_TRUE(inner.ok());
    MeteredStateStore m(**inner);
    EXPECT_EQ(m.calls(), 0);
    JobRecord job;
    job.id = "j";
    ASSERT_TRUE(m.CreateJob(job, {}).ok());
    EXPECT_EQ(m.CreateJob(job, {}).code(), ErrorCode::kAlreadyExists);
    EXPECT_EQ(m.GetJob("nope").status().code(), ErrorCode::kNotFound);
    auto jobs = m.ListJobs();
    ASSERT_TRUE(jobs.ok());
    EXPECT_EQ(jobs->size(), 1u);
    EXPECT_EQ(m.calls(), 4);
    EXPECT_GT(m.seconds(), 0.0);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ferry::state
