#include "volume/order_learner.h"

#include <gtest/gtest.h>

#include <memory>

namespace ferry::volume {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(TraceSettledTest, NoNewChunkForSettleOrPastTheWindow) {
  LearnSettings s{.settle = 10s, .window = 120s};
  EXPECT_FALSE(TraceSettled(30s, 9s, s));
  EXPECT_TRUE(TraceSettled(30s, 10s, s));
  EXPECT_FALSE(TraceSettled(119s, 1s, s));
  EXPECT_TRUE(TraceSettled(120s, 1s, s));
}

// A repository of one snapshot, "repo/img", in memory.
class OrderLearnerTest : public ::testing::Test {
 protected:
  OrderLearnerTest() {
    manifest_.name = "img";
    manifest_.chunk_size = 4096;
    manifest_.image_size = 64 * 4096;
    manifest_.chunks.assign(64, std::string(64, 'a'));
  }
  OrderLearner::UpdateManifest Update() {
    return [this](const std::string& from, const std::function<bool(snapshot::Manifest*)>& change) {
      ++updates_;
      if (from != "repo/img") return Status::NotFound("no snapshot " + from);
      snapshot::Manifest m = manifest_;
      if (change(&m)) {
        ++writes_;
        manifest_ = m;
      }
      return Status::Ok();
    };
  }
  // A clone whose first touches the test sets.
  OrderLearner::Touches Clone(std::shared_ptr<std::vector<uint32_t>> touches) {
    return [touches] { return *touches; };
  }

  snapshot::Manifest manifest_;
  int updates_ = 0, writes_ = 0;
  const LearnSettings settings_{.settle = 10s, .window = 120s, .max_bytes = 16 * 4096};
  const Clock::time_point t0_ = Clock::now();
};

TEST_F(OrderLearnerTest, AClonesTraceIsMergedOnceItSettles) {
  OrderLearner learner(settings_, Update());
  auto a = std::make_shared<std::vector<uint32_t>>();
  learner.Watch("a", "repo/img", Clone(a));
  learner.Poll(t0_ + 60s);  // nothing touched yet: nothing to learn, however long
  *a = {5, 1};
  learner.Poll(t0_ + 61s);
  a->push_back(9);
  learner.Poll(t0_ + 66s);  // a new chunk: the settle starts again
  learner.Poll(t0_ + 75s);
  EXPECT_EQ(updates_, 0);
  learner.Poll(t0_ + 76s);
  EXPECT_EQ(updates_, 1);
  EXPECT_EQ(manifest_.prefetch, (std::vector<uint32_t>{5, 1, 9}));
  EXPECT_EQ(manifest_.learned_clones, 1u);
  EXPECT_EQ(learner.merged(), 1u);
  EXPECT_EQ(learner.watching(), 0u);
  a->push_back(10);  // once merged, a clone is not merged again
  learner.Poll(t0_ + 200s);
  EXPECT_EQ(updates_, 1);
}

TEST_F(OrderLearnerTest, ClonesThatSettleTogetherAreOneWriteAndAWindowEndsABusyOne) {
  OrderLearner learner(settings_, Update());
  auto a = std::make_shared<std::vector<uint32_t>>(std::vector<uint32_t>{1, 2});
  auto b = std::make_shared<std::vector<uint32_t>>(std::vector<uint32_t>{1, 3});
  auto busy = std::make_shared<std::vector<uint32_t>>();
  learner.Watch("a", "repo/img", Clone(a));
  learner.Watch("b", "repo/img", Clone(b));
  learner.Watch("busy", "repo/img", Clone(busy));
  for (int s = 0; s <= 10; ++s) {
    busy->push_back(static_cast<uint32_t>(20 + s));
    learner.Poll(t0_ + std::chrono::seconds(s));
  }
  EXPECT_EQ(updates_, 1);  // a and b
  EXPECT_EQ(writes_, 1);
  EXPECT_EQ(manifest_.learned_clones, 2u);
  for (int s = 11; s <= 120; ++s) {
    busy->push_back(static_cast<uint32_t>(20 + s % 40));
    learner.Poll(t0_ + std::chrono::seconds(s));
  }
  EXPECT_EQ(updates_, 2);  // the busy one, at its window
  EXPECT_EQ(manifest_.learned_clones, 3u);
  EXPECT_LE(manifest_.prefetch.size(), 16u);  // --learn-bytes: 16 chunks
}

TEST_F(OrderLearnerTest, ARemovedCloneOrAFailedWriteTeachesNothing) {
  OrderLearner learner(settings_, Update());
  auto a = std::make_shared<std::vector<uint32_t>>(std::vector<uint32_t>{1});
  learner.Watch("a", "repo/img", Clone(a));
  learner.Watch("b", "repo/gone", Clone(a));
  learner.Poll(t0_);
  learner.Forget("a");
  learner.Poll(t0_ + 30s);
  EXPECT_EQ(updates_, 1);  // b's, which failed
  EXPECT_EQ(writes_, 0);
  EXPECT_EQ(learner.merged(), 0u);
  EXPECT_TRUE(manifest_.prefetch.empty());
}

}  // namespace
}  // namespace ferry::volume
