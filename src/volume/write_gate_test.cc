#include "volume/write_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

namespace ferry::volume {
namespace {

using namespace std::chrono_literals;

TEST(WriteGateTest, AFreezeWaitsForWritesInsideAndHoldsNewOnesOff) {
  WriteGate gate;
  gate.Enter();  // a write in flight
  std::atomic<bool> ran{false}, in_frozen{false};
  auto freeze = std::async(std::launch::async, [&] {
    gate.Freeze([&] {
      in_frozen = true;
      std::this_thread::sleep_for(50ms);
      in_frozen = false;
      ran = true;
    });
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(ran);  // the write is still inside
  // A write arriving now waits behind the freeze, not the other way round.
  std::atomic<bool> late_inside{false}, late_saw_freeze{false};
  auto late = std::async(std::launch::async, [&] {
    WriteGate::Writer w(gate);
    late_inside = true;
    late_saw_freeze = in_frozen.load();
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(late_inside);
  gate.Leave();
  freeze.get();
  late.get();
  EXPECT_TRUE(ran);
  EXPECT_TRUE(late_inside);
  EXPECT_FALSE(late_saw_freeze);
}

TEST(WriteGateTest, WritesRunTogetherWhenNothingFreezes) {
  WriteGate gate;
  WriteGate::Writer a(gate);
  auto b = std::async(std::launch::async, [&] { WriteGate::Writer w(gate); });
  EXPECT_EQ(b.wait_for(5s), std::future_status::ready);
}

}  // namespace
}  // namespace ferry::volume
