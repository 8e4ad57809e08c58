#include "cache/fill_encoder.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "cache/proxy_test_util.h"
#include "codec/zstd_codec.h"

namespace ferry::cache {
namespace {

using namespace std::chrono_literals;

std::shared_ptr<const CachedObject> Body(const std::string& key, size_t n) {
  auto o = std::make_shared<CachedObject>();
  o->meta.key = key;
  o->body = Text(n) + key;
  return o;
}

// What the sink was handed, in order.
struct Handed {
  std::mutex mu;
  std::vector<FillEncoder::Done> done;
  std::vector<size_t> turns;  // bodies handed on at a time
  FillEncoder::Sink Sink() {
    return [this](std::vector<FillEncoder::Done> turn) {
      std::lock_guard lock(mu);
      turns.push_back(turn.size());
      for (auto& d : turn) done.push_back(std::move(d));
    };
  }
  size_t size() {
    std::lock_guard lock(mu);
    return done.size();
  }
};

FillEncoderOptions Held(size_t max_batch) {  // a turn only for a full batch, a Drain or the end
  FillEncoderOptions o;
  o.max_batch = max_batch;
  o.gather = std::chrono::hours(1);
  return o;
}

TEST(FillEncoderTest, EveryBodyIsHandedOnCompressedInTheOrderGiven) {
  Handed h;
  FillEncoder e(FillEncoderOptions{}, h.Sink());
  std::vector<std::shared_ptr<const CachedObject>> in;
  for (int i = 0; i < 40; ++i) {
    in.push_back(Body("/k" + std::to_string(i), 4096 + 700 * i));
    ASSERT_TRUE(e.Submit(in.back()));
  }
  e.Drain();
  ASSERT_EQ(h.size(), in.size());
  uint64_t cpu = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(h.done[i].plain, in[i]);
    ASSERT_TRUE(h.done[i].frame.ok());
    EXPECT_LT(h.done[i].frame->size(), in[i]->body.size() / 2);
    EXPECT_EQ(codec::ZstdDecompress(*h.done[i].frame).value(), in[i]->body);
    cpu += h.done[i].cpu_ns;
  }
  EXPECT_GT(cpu, 0u);
}

TEST(FillEncoderTest, BodiesWaitForAFullBatchAndItIsCompressedInOneTurn) {
  Handed h;
  FillEncoder e(Held(4), h.Sink());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(e.Submit(Body("/k" + std::to_string(i), 8000)));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(h.size(), 0u);  // gathering
  EXPECT_EQ(e.batches(), 0u);
  ASSERT_TRUE(e.Submit(Body("/k3", 8000)));
  for (int i = 0; i < 500 && h.size() < 4; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(h.size(), 4u);
  EXPECT_EQ(e.batches(), 1u);
  EXPECT_EQ(h.turns, std::vector<size_t>{4});  // handed on together
}

TEST(FillEncoderTest, ABodyWaitsNoLongerThanTheGatherWindow) {
  Handed h;
  FillEncoderOptions o;
  o.gather = 20ms;
  FillEncoder e(o, h.Sink());
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(e.Submit(Body("/alone", 8000)));
  for (int i = 0; i < 500 && h.size() < 1; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(h.size(), 1u);
  // 20 ms of gathering and one compression; a loaded machine may add some.
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(FillEncoderTest, AFullQueueRefusesByCountAndByBytes) {
  Handed h;
  FillEncoderOptions o = Held(100);
  o.max_jobs = 2;
  o.max_bytes = 30'000;
  FillEncoder e(o, h.Sink());
  EXPECT_TRUE(e.Submit(Body("/a", 10'000)));
  EXPECT_FALSE(e.Submit(Body("/big", 25'000)));  // 10 + 25 KB over 30 KB
  EXPECT_TRUE(e.Submit(Body("/b", 10'000)));
  EXPECT_FALSE(e.Submit(Body("/c", 100)));  // a third body
  e.Drain();
  EXPECT_EQ(h.size(), 2u);
  EXPECT_TRUE(e.Submit(Body("/c", 100)));  // room again
}

TEST(FillEncoderTest, TheEndHandsOnWhatStillWaits) {
  Handed h;
  {
    FillEncoder e(Held(100), h.Sink());
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(e.Submit(Body("/k" + std::to_string(i), 5000)));
  }
  ASSERT_EQ(h.size(), 5u);
  for (auto& d : h.done) EXPECT_EQ(codec::ZstdDecompress(*d.frame).value(), d.plain->body);
}

}  // namespace
}  // namespace ferry::cache
