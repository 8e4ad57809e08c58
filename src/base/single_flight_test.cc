#include "base/single_flight.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace ferry {
namespace {

using namespace std::chrono_literals;

TEST(SingleFlight, ConcurrentCallersShareOneRun) {
  SingleFlight<std::string, int> flights;
  std::atomic<int> runs{0};
  std::atomic<bool> release{false};
  std::vector<int> got(8, -1);
  std::vector<char> led(8, 0);  // not vector<bool>: its bits share words across threads
  std::vector<std::thread> threads;
  // The leader holds its work open until every follower waits on it.
  threads.emplace_back([&] {
    auto [v, l] = flights.Do("k", [&] {
      ++runs;
      while (!release) std::this_thread::sleep_for(1ms);
      return 42;
    });
    got[0] = v;
    led[0] = l;
  });
  while (runs == 0) std::this_thread::sleep_for(1ms);
  for (int i = 1; i < 8; ++i) {
    threads.emplace_back([&, i] {
      auto [v, l] = flights.Do("k", [&] {
        ++runs;
        return 7;
      });
      got[i] = v;
      led[i] = l;
    });
  }
  while (flights.Waiters("k") < 7) std::this_thread::sleep_for(1ms);
  release = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(runs, 1);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(got[i], 42) << i;
  EXPECT_TRUE(led[0]);
  for (int i = 1; i < 8; ++i) EXPECT_FALSE(led[i]) << i;
  EXPECT_EQ(flights.Waiters("k"), 0);
}

TEST(SingleFlight, DifferentKeysDoNotWaitForEachOther) {
  SingleFlight<std::string, int> flights;
  std::atomic<bool> release{false};
  std::atomic<bool> started{false};
  std::thread slow([&] {
    flights.Do("a", [&] {
      started = true;
      while (!release) std::this_thread::sleep_for(1ms);
      return 1;
    });
  });
  while (!started) std::this_thread::sleep_for(1ms);
  auto [v, led] = flights.Do("b", [] { return 2; });  // would hang if it waited on "a"
  EXPECT_EQ(v, 2);
  EXPECT_TRUE(led);
  release = true;
  slow.join();
}

TEST(SingleFlight, NothingIsRememberedAfterAFlight) {
  SingleFlight<std::string, int> flights;
  int runs = 0;
  for (int i = 0; i < 3; ++i) {
    auto [v, led] = flights.Do("k", [&] { return ++runs; });
    EXPECT_EQ(v, i + 1);
    EXPECT_TRUE(led);
  }
}

TEST(SingleFlight, AThrowingLeaderReleasesItsWaitersWithADefaultValue) {
  SingleFlight<std::string, int> flights;
  std::atomic<bool> release{false};
  std::atomic<bool> started{false};
  int follower_got = -1;
  std::thread leader([&] {
    EXPECT_THROW(flights.Do("k",
                            [&]() -> int {
                              started = true;
                              while (!release) std::this_thread::sleep_for(1ms);
                              throw std::runtime_error("boom");
                            }),
                 std::runtime_error);
  });
  while (!started) std::this_thread::sleep_for(1ms);
  std::thread follower([&] { follower_got = flights.Do("k", [] { return 5; }).first; });
  while (flights.Waiters("k") < 1) std::this_thread::sleep_for(1ms);
  release = true;
  leader.join();
  follower.join();
  EXPECT_EQ(follower_got, 0);
}

}  // namespace
}  // namespace ferry
