#include "volume/fetch_gate.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "volume/volume_test_fixture.h"

namespace ferry::volume {
namespace {

using namespace std::chrono_literals;
using test::kChunk;

// Polls `done` for up to 10 s.
bool Eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 10000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return done();
}

TEST(FetchGateTest, TriggersThenPrefetchThenBackground) {
  FetchGate gate(1);
  auto held = gate.Acquire(FetchPriority::kBackground);  // the only slot, held
  std::vector<std::string> order;
  std::mutex mu;
  auto caller = [&](FetchPriority p, const char* name) {
    return std::thread([&, p, name] {
      auto mine = gate.Acquire(p);
      {
        std::lock_guard lock(mu);
        order.push_back(name);
      }
      gate.Release(mine);
    });
  };
  // They arrive lowest first; each is seen waiting before the next comes.
  std::thread background = caller(FetchPriority::kBackground, "background");
  ASSERT_TRUE(Eventually([&] { return gate.waiting() == 1; }));
  std::thread prefetch = caller(FetchPriority::kPrefetch, "prefetch");
  ASSERT_TRUE(Eventually([&] { return gate.waiting() == 2; }));
  std::thread trigger = caller(FetchPriority::kTrigger, "trigger");
  ASSERT_TRUE(Eventually([&] { return gate.waiting() == 3; }));
  ASSERT_EQ(gate.waiting_at(FetchPriority::kPrefetch), 1);
  ASSERT_EQ(gate.urgent_waiting(), 1);
  gate.Release(held);
  background.join();
  prefetch.join();
  trigger.join();
  EXPECT_EQ(order, (std::vector<std::string>{"trigger", "prefetch", "background"}));
}

TEST(FetchGateTest, ReservedSlotsAreForTriggers) {
  FetchGate gate(8, {.reserve = 2, .yield_slots = 8, .yield_window = 0ms});
  for (int i = 0; i < 6; ++i)
    gate.Acquire(i % 2 ? FetchPriority::kPrefetch : FetchPriority::kBackground);
  std::thread seventh([&] { gate.Release(gate.Acquire(FetchPriority::kBackground)); });
  ASSERT_TRUE(Eventually([&] { return gate.waiting() == 1; }));
  // Two slots are free, and a trigger takes one at once.
  auto trigger =
      std::async(std::launch::async, [&] { return gate.Acquire(FetchPriority::kTrigger); });
  ASSERT_EQ(trigger.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(gate.in_flight_at(FetchPriority::kTrigger), 1);
  EXPECT_EQ(gate.waiting(), 1);  // the seventh still waits
  gate.Release(FetchPriority::kBackground);
  seventh.join();
  gate.Release(trigger.get());
}

TEST(FetchGateTest, WhileClientsAreBusyLowPrioritiesKeepToTheirYieldSlots) {
  FetchGate gate(8, {.reserve = 0, .yield_slots = 2, .yield_window = 1h});
  auto t = gate.Acquire(FetchPriority::kTrigger);
  gate.Acquire(FetchPriority::kPrefetch);
  gate.Acquire(FetchPriority::kBackground);
  std::atomic<bool> third{false};
  std::thread waiter([&] {
    gate.Acquire(FetchPriority::kPrefetch);
    third = true;
  });
  ASSERT_TRUE(Eventually([&] { return gate.waiting() == 1; }));
  gate.Release(t);  // no trigger in flight, but one ended just now: still busy
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(third);
  EXPECT_EQ(
      gate.in_flight_at(FetchPriority::kPrefetch) + gate.in_flight_at(FetchPriority::kBackground),
      2);
  gate.Release(FetchPriority::kBackground);  // one of the two ends: the third takes its place
  waiter.join();
  EXPECT_TRUE(third);
}

TEST(FetchGateTest, OnceClientsAreQuietLowPrioritiesTakeEverySlotButTheReserve) {
  FetchGate gate(8, {.reserve = 2, .yield_slots = 1, .yield_window = 30ms});
  gate.Release(gate.Acquire(FetchPriority::kTrigger));
  gate.Acquire(FetchPriority::kBackground);
  std::thread more([&] {
    for (int i = 0; i < 5; ++i)
      gate.Acquire(FetchPriority::kBackground);  // no release needed: time
  });
  more.join();
  EXPECT_EQ(gate.in_flight_at(FetchPriority::kBackground), 6);
  std::thread seventh([&] { gate.Acquire(FetchPriority::kBackground); });
  ASSERT_TRUE(Eventually([&] { return gate.waiting() == 1; }));  // the reserve
  gate.Release(FetchPriority::kBackground);
  seventh.join();
}

// Fetches of the chunks in `held` wait until Release(); the rest answer at once.
class HoldingSource : public ChunkSource {
 public:
  explicit HoldingSource(const std::map<std::string, std::string>& chunks) : chunks_(chunks) {}
  std::set<std::string> held;  // set before fetches run
  Result<std::string> Fetch(const std::string& hash, bool) override {
    std::unique_lock lock(mu_);
    started_.push_back(hash);
    cv_.notify_all();
    cv_.wait(lock, [&] { return released_ || !held.count(hash); });
    return chunks_.at(hash);
  }
  size_t started() const {
    std::lock_guard lock(mu_);
    return started_.size();
  }
  void Release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  const std::map<std::string, std::string>& chunks_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> started_;
  bool released_ = false;
};

// An order that was wrong costs its bytes, never a client's wait: its
// fetches, slow and in flight, neither delay a read's trigger nor keep
// more of them from starting while the client is busy.
class DemandFirstTest : public test::VolumeTest {};

TEST_F(DemandFirstTest, AWrongOrderNeverDelaysARead) {
  manifest_.prefetch = {4, 5, 6};  // the client reads chunk 0: the order is wrong
  HoldingSource source(source_.chunks);
  for (uint32_t c : manifest_.prefetch) source.held.insert(manifest_.chunks[c]);
  FetchGate gate(8, {.reserve = 2, .yield_slots = 1, .yield_window = 1h});
  auto v = Open("v", 0, &source, &gate);
  std::vector<std::thread> prefetchers;
  for (int i = 0; i < 3; ++i)
    prefetchers.emplace_back([&] { EXPECT_TRUE(v->PrefetchNext().ok()); });
  ASSERT_TRUE(
      Eventually([&] { return source.started() == 3; }));  // the order's three, slow, in flight
  EXPECT_EQ(gate.in_flight_at(FetchPriority::kPrefetch), 3);
  // The client reads chunk 0: its trigger does not wait for the order.
  std::string buf(kChunk, 'x');
  auto read = std::async(std::launch::async, [&] { return v->Read(0, kChunk, buf.data()); });
  ASSERT_EQ(read.wait_for(10s), std::future_status::ready);
  ASSERT_TRUE(read.get().ok());
  EXPECT_EQ(buf, image_.substr(0, kChunk));
  // The client is busy now: no more background or prefetch starts while
  // the order's fetches hold more than the yield slots.
  std::thread hydrator([&] { EXPECT_TRUE(v->HydrateNext().ok()); });  // chunk 1
  ASSERT_TRUE(Eventually([&] { return gate.waiting_at(FetchPriority::kBackground) == 1; }));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(source.started(), 4u);  // the order's three and chunk 0: not chunk 1
  source.Release();
  for (auto& t : prefetchers) t.join();
  hydrator.join();
  EXPECT_EQ(source.started(), 5u);
  EXPECT_EQ(v->stats().triggers, 1u);
}

}  // namespace
}  // namespace ferry::volume
