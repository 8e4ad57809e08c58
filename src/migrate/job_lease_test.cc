#include "migrate/job_lease.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

namespace ferry::migrate {
namespace {

using std::chrono::milliseconds;

class JobLeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-job-lease-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto s = state::OpenSqliteStateStore(dir_ + "/state.db");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
    state::JobRecord j;
    j.id = "j";
    j.spec = "{}";
    ASSERT_TRUE(store_->CreateJob(j, {}).ok());
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  state::JobRecord Job() { return store_->GetJob("j").value(); }

  std::string dir_;
  std::unique_ptr<state::StateStore> store_;
};

TEST_F(JobLeaseTest, RenewsTheClaimAndTheObjectLeases) {
  ASSERT_TRUE(store_->AcquireJob("j", "a", 1000, 2000, false).ok());
  JobLease lease(*store_, "j", "a", milliseconds(10'000), false, true);
  JobLease::Round r = lease.Renew(1500, Job());
  EXPECT_FALSE(r.taken_over);
  EXPECT_EQ(r.objects_until, 11'500);
  EXPECT_EQ(Job().runner_until_ms, 11'500);
}

TEST_F(JobLeaseTest, OutsideAPoolALostClaimIsATakeOver) {
  ASSERT_TRUE(store_->AcquireJob("j", "a", 1000, 2000, false).ok());
  ASSERT_TRUE(store_->AcquireJob("j", "b", 1100, 9000, true).ok());  // forced, as `resume --force` does
  JobLease lease(*store_, "j", "a", milliseconds(10'000), false, true);
  JobLease::Round r = lease.Renew(1500, Job());
  EXPECT_TRUE(r.taken_over);
  EXPECT_NE(r.why.message().find("taken over"), std::string::npos) << r.why.ToString();
  EXPECT_EQ(Job().runner, "b");
}

TEST_F(JobLeaseTest, InAPoolTheListingMovesToARunnerThatSeesItsHolderGone) {
  ASSERT_TRUE(store_->AcquireJob("j", "a", 1000, 2000, false).ok());
  JobLease a(*store_, "j", "a", milliseconds(1000), true, true);
  JobLease b(*store_, "j", "b", milliseconds(1000), true, false);
  // a's claim is live: b does not take the listing.
  JobLease::Round rb = b.Renew(1500, Job());
  EXPECT_FALSE(rb.listing_taken);
  EXPECT_FALSE(b.lists());
  // a stops renewing; once its claim lapsed, b takes the listing...
  rb = b.Renew(2500, Job());
  EXPECT_TRUE(rb.listing_taken);
  EXPECT_TRUE(b.lists());
  EXPECT_EQ(Job().runner, "b");
  // ...and a, renewing late, learns it lost it, without a take-over.
  JobLease::Round ra = a.Renew(2600, Job());
  EXPECT_TRUE(ra.listing_lost);
  EXPECT_FALSE(ra.taken_over);
  EXPECT_FALSE(a.lists());
  // b gives the listing back at once when it stops early.
  ASSERT_TRUE(b.GiveBackListing(2700).ok());
  EXPECT_LE(Job().runner_until_ms, 2700);
  EXPECT_TRUE(a.GiveBackListing(2700).ok()) << "one that does not list has nothing to give back";
}

TEST_F(JobLeaseTest, InAPoolAFinishedListingIsNotTakenOver) {
  ASSERT_TRUE(store_->AcquireJob("j", "a", 1000, 2000, false).ok());
  state::JobRecord seen = Job();
  seen.listing_done = true;
  JobLease b(*store_, "j", "b", milliseconds(1000), true, false);
  EXPECT_FALSE(b.Renew(5000, seen).listing_taken);
  EXPECT_EQ(Job().runner, "a");
}

}  // namespace
}  // namespace ferry::migrate
