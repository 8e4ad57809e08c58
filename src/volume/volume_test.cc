#include "volume/volume.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "crypto/digest.h"
#include "volume/chunk_cache.h"
#include "volume/volume_test_fixture.h"

namespace ferry::volume {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::FakeSource;
using test::kChunk;
using test::VolumeTest;

TEST_F(VolumeTest, ReadsFetchWhatTheyTouchOnceAndZeroChunksNever) {
  auto v = Open();
  std::string buf(100, 'x');
  ASSERT_TRUE(v->Read(kChunk + 10, 100, buf.data()).ok());
  EXPECT_EQ(buf, image_.substr(kChunk + 10, 100));
  EXPECT_EQ(source_.fetches, 1);
  ASSERT_TRUE(v->Read(kChunk + 500, 100, buf.data()).ok());
  EXPECT_EQ(source_.fetches, 1);  // present now
  ASSERT_TRUE(v->Read(3 * kChunk, 100, buf.data()).ok());
  EXPECT_EQ(buf, std::string(100, '\0'));
  EXPECT_EQ(source_.fetches, 1);  // a zero chunk is never fetched
  EXPECT_EQ(ReadAll(*v), image_);
  EXPECT_EQ(source_.fetches, 7);  // 8 chunks, one of them zeros
  EXPECT_EQ(v->stats().triggers, 7u);
  v->Settle();  // the reads' chunks installed
  EXPECT_TRUE(v->complete());
}

TEST_F(VolumeTest, ATriggerReadsAheadTheNextMissingChunks) {
  readahead_ = 2;
  auto v = Open("ra");
  ASSERT_NE(v, nullptr);
  std::string buf(100, 'x');
  // A first read of chunk 0 is not sequential: nothing read ahead.
  ASSERT_TRUE(v->Read(10, 100, buf.data()).ok());
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(source_.fetches, 1);
  // Chunk 1 after chunk 0 is: chunks 2 and 3 are read ahead (3 is zeros:
  // present already, so only 2 is fetched) as hints, not triggers.
  ASSERT_TRUE(v->Read(kChunk + 10, 100, buf.data()).ok());
  for (int i = 0; i < 2000 && !v->Ready(2 * kChunk, kChunk); ++i) std::this_thread::sleep_for(1ms);
  VolumeStats s = v->stats();
  EXPECT_EQ(s.triggers, 2u);
  EXPECT_EQ(s.hinted, 1u);
  EXPECT_TRUE(v->Ready(2 * kChunk, kChunk));
  EXPECT_FALSE(v->Ready(4 * kChunk, kChunk));
  // Reading chunk 2 now fetches nothing; a read of present chunks reads
  // nothing ahead.
  const int fetched = source_.fetches;
  ASSERT_TRUE(v->Read(2 * kChunk, 100, buf.data()).ok());
  EXPECT_EQ(buf, image_.substr(2 * kChunk, 100));
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(source_.fetches, fetched);
  v.reset();  // waits for readahead threads (none left here)
}

TEST_F(VolumeTest, ATriggerFetchesTheChunksAroundItOnceItIsIn) {
  read_around_ = 1;
  auto v = Open("around");
  ASSERT_NE(v, nullptr);
  source_.hold = true;
  std::string buf(100, 'x');
  std::thread reader([&] { EXPECT_TRUE(v->Read(5 * kChunk + 10, 100, buf.data()).ok()); });
  for (int i = 0; i < 5000 && source_.fetches < 1; ++i) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(source_.fetches, 1);  // nothing around it shares the origin with the trigger
  source_.Release();
  reader.join();
  EXPECT_EQ(buf, image_.substr(5 * kChunk + 10, 100));
  for (int i = 0; i < 2000 && !(v->Ready(4 * kChunk, kChunk) && v->Ready(6 * kChunk, kChunk)); ++i) {
    std::this_thread::sleep_for(1ms);
  }
  v->Settle();  // chunk 5's own install
  EXPECT_TRUE(v->Ready(4 * kChunk, 3 * kChunk));
  EXPECT_FALSE(v->Ready(2 * kChunk, kChunk));
  VolumeStats s = v->stats();
  EXPECT_EQ(s.triggers, 1u);
  EXPECT_EQ(s.hinted, 2u);
  // Around chunk 2: chunk 1 is fetched, chunk 3 is zeros (present).
  ASSERT_TRUE(v->Read(2 * kChunk, 100, buf.data()).ok());
  for (int i = 0; i < 2000 && !v->Ready(kChunk, kChunk); ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(source_.fetches, 5);
  EXPECT_FALSE(v->Ready(0, kChunk));
  v.reset();  // waits for the threads
}

TEST_F(VolumeTest, ALargerVolumeReadsZerosPastItsSnapshot) {
  auto v = Open("big", 16 * kChunk);
  std::string tail(16 * kChunk - image_.size(), 'x');
  ASSERT_TRUE(v->Read(image_.size(), tail.size(), tail.data()).ok());
  EXPECT_EQ(tail, std::string(tail.size(), '\0'));
  EXPECT_EQ(source_.fetches, 1);  // only the snapshot's short last chunk
}

TEST_F(VolumeTest, WholeChunkWritesAndZeroesNeedNoFetchPartialOnesMerge) {
  auto v = Open();
  std::string mine(kChunk, 'm');
  ASSERT_TRUE(v->Write(2 * kChunk, mine, false).ok());
  ASSERT_TRUE(v->WriteZeroes(4 * kChunk, kChunk, false).ok());
  ASSERT_TRUE(v->Trim(5 * kChunk, kChunk, false).ok());
  EXPECT_EQ(source_.fetches, 0);
  ASSERT_TRUE(v->Write(6 * kChunk + 100, "partial", true).ok());  // fetched, then merged
  EXPECT_EQ(source_.fetches, 1);
  std::string want = image_;
  want.replace(2 * kChunk, kChunk, mine);
  want.replace(4 * kChunk, 2 * kChunk, std::string(2 * kChunk, '\0'));
  want.replace(6 * kChunk + 100, 7, "partial");
  EXPECT_EQ(ReadAll(*v), want);
  EXPECT_EQ(source_.fetches, 4);  // chunks 0, 1, 6, 7 and nothing of 2-5
}

TEST_F(VolumeTest, BackgroundHydrationFollowsThePrefetchOrderThenTheRest) {
  manifest_.prefetch = {6, 1};
  auto v = Open();
  EXPECT_TRUE(v->PrefetchPending());
  ASSERT_TRUE(v->HydrateNext().ok());
  EXPECT_TRUE(v->PrefetchPending());  // chunk 1 is left
  ASSERT_TRUE(v->HydrateNext().ok());
  EXPECT_FALSE(v->PrefetchPending());  // the rest is not the prefetch order
  for (;;) {
    auto more = v->HydrateNext();
    ASSERT_TRUE(more.ok()) << more.status().ToString();
    if (!*more) break;
  }
  const std::vector<std::string> order = source_.Order();
  ASSERT_EQ(order.size(), 7u);
  EXPECT_FALSE(v->PrefetchPending());
  EXPECT_EQ(order[0], manifest_.chunks[6]);
  EXPECT_EQ(order[1], manifest_.chunks[1]);
  EXPECT_EQ(order[2], manifest_.chunks[0]);
  EXPECT_EQ(v->stats().background, 7u);
  EXPECT_EQ(ReadAll(*v), image_);
  EXPECT_EQ(source_.fetches, 7);
}

TEST_F(VolumeTest, PrefetchersFetchTheOrderSeveralAtOnceAndNothingElse) {
  manifest_.prefetch = {6, 1, 5, 2};
  prefetch_parallel_ = 3;
  auto v = Open();
  source_.hold = true;
  std::vector<std::thread> prefetchers;
  for (int t = 0; t < 6; ++t) {
    prefetchers.emplace_back([&] {
      for (;;) {
        auto more = v->PrefetchNext();
        ASSERT_TRUE(more.ok()) << more.status().ToString();
        if (!*more) break;
      }
    });
  }
  for (int i = 0; i < 500 && source_.fetches < 3; ++i) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(20ms);  // a fourth fetch would show here
  EXPECT_EQ(source_.fetches, 3);      // three at once (prefetch_parallel), in the order's order
  EXPECT_FALSE(v->PrefetchPending());  // chunk 2 is left, but three are in flight
  EXPECT_FALSE(v->PrefetchDone());
  {
    std::vector<std::string> first = source_.Order();
    std::sort(first.begin(), first.end());
    std::vector<std::string> want{manifest_.chunks[6], manifest_.chunks[1], manifest_.chunks[5]};
    std::sort(want.begin(), want.end());
    EXPECT_EQ(first, want);
  }
  source_.Release();
  for (auto& t : prefetchers) t.join();
  EXPECT_TRUE(v->PrefetchDone());
  EXPECT_FALSE(v->PrefetchNext().value());
  EXPECT_EQ(v->stats().present, 5u);   // and the zero chunk 3, present from the start
  EXPECT_EQ(v->stats().hinted, 4u);     // counted as prefetches,
  EXPECT_EQ(v->stats().background, 0u);  // not as background hydration
  // Hydration takes the rest.
  while (v->HydrateNext().value()) {
  }
  EXPECT_EQ(source_.fetches, 7);
  EXPECT_EQ(ReadAll(*v), image_);
}

TEST_F(VolumeTest, AReadSpanningMissingChunksFetchesThemTogether) {
  auto v = Open();
  source_.hold = true;
  std::string buf(3 * kChunk, 'x');
  std::thread reader([&] { EXPECT_TRUE(v->Read(kChunk / 2, 3 * kChunk, buf.data()).ok()); });  // chunks 0-3
  for (int i = 0; i < 500 && source_.fetches < 3; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(source_.fetches, 3);  // 0, 1 and 2 at once (3 is all zeros), not one after another
  source_.Release();
  reader.join();
  EXPECT_EQ(buf, image_.substr(kChunk / 2, 3 * kChunk));
  std::vector<uint32_t> touches = v->FirstTouches();
  EXPECT_EQ(touches, (std::vector<uint32_t>{0, 1, 2, 3}));  // in the order of the read
}

TEST_F(VolumeTest, ConcurrentHydratorsTakeDifferentChunks) {
  auto v = Open();
  source_.hold = true;
  std::thread a([&] { EXPECT_TRUE(v->HydrateNext().ok()); });
  std::thread b([&] { EXPECT_TRUE(v->HydrateNext().ok()); });
  for (int i = 0; i < 500 && source_.fetches < 2; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(source_.fetches, 2);  // both fetching at once, not one waiting on the other
  source_.Release();
  a.join();
  b.join();
  EXPECT_EQ(v->stats().present, 3u);  // the zero chunk and the two fetched
}

TEST_F(VolumeTest, ARestartKeepsHydratedChunksAndClientWrites) {
  {
    auto v = Open();
    std::string buf(10, 'x');
    ASSERT_TRUE(v->Read(0, 10, buf.data()).ok());
    ASSERT_TRUE(v->Write(kChunk + 1, "written", true).ok());
  }
  int before = source_.fetches;
  auto v = Open();
  EXPECT_EQ(v->stats().present, 3u);  // chunks 0, 1 and the zero chunk 3
  std::string buf(7, 'x');
  ASSERT_TRUE(v->Read(kChunk + 1, 7, buf.data()).ok());
  EXPECT_EQ(buf, "written");
  ASSERT_TRUE(v->Read(0, 10, buf.data()).ok());
  EXPECT_EQ(source_.fetches, before);  // nothing hydrated is fetched again
}

TEST_F(VolumeTest, ALateFillNeverOverwritesAClientsWrite) {
  auto v = Open();
  source_.hold = true;
  std::thread bg([&] { EXPECT_TRUE(v->HydrateNext().ok()); });  // fetching chunk 0, held
  while (source_.fetches < 1) std::this_thread::sleep_for(1ms);
  std::string mine(kChunk, 'c');
  ASSERT_TRUE(v->Write(0, mine, true).ok());  // the whole chunk, while its fill is in flight
  source_.Release();
  bg.join();
  std::string buf(kChunk, 'x');
  ASSERT_TRUE(v->Read(0, kChunk, buf.data()).ok());
  EXPECT_EQ(buf, mine);
}

TEST_F(VolumeTest, ConcurrentTriggersForOneChunkShareOneFetch) {
  auto v = Open();
  source_.hold = true;
  std::vector<std::thread> readers;
  std::vector<std::string> got(6, std::string(10, 'x'));
  for (int i = 0; i < 6; ++i) {
    readers.emplace_back([&, i] { EXPECT_TRUE(v->Read(5 * kChunk + i, 10, got[i].data()).ok()); });
  }
  while (source_.fetches < 1) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(100ms);
  source_.Release();
  for (auto& t : readers) t.join();
  EXPECT_EQ(source_.fetches, 1);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(got[i], image_.substr(5 * kChunk + i, 10));
  // Each reader that found the chunk missing is observed (one that a busy
  // machine started after the release may find it present: not counted),
  // and the leader's wait is at least the 100 ms hold.
  auto waits = trigger_waits_.Snap();
  EXPECT_GE(waits.count(), 1u);
  EXPECT_LE(waits.count(), 6u);
  EXPECT_GE(waits.sum, 0.1);
  uint64_t long_waits = waits.overflow;
  for (size_t b = 0; b < waits.counts.size(); ++b) {
    if (LatencyHistogram::kBounds[b] >= 0.1) long_waits += waits.counts[b];
  }
  EXPECT_GE(long_waits, 1u);
  // A read of the present chunk and a background fetch wait for no client.
  ASSERT_TRUE(v->Read(5 * kChunk, 10, got[0].data()).ok());
  ASSERT_TRUE(v->HydrateNext().ok());
  EXPECT_EQ(trigger_waits_.Snap().count(), 6u);
}

TEST_F(VolumeTest, AFailingSourceFailsTheIoAndNothingIsMarked) {
  auto v = Open();
  source_.fail = true;
  std::string buf(10, 'x');
  EXPECT_FALSE(v->Read(0, 10, buf.data()).ok());
  EXPECT_EQ(v->stats().fetch_errors, 1u);
  EXPECT_EQ(v->stats().present, 1u);  // only the zero chunk
  source_.fail = false;
  ASSERT_TRUE(v->Read(0, 10, buf.data()).ok());
  EXPECT_EQ(buf, image_.substr(0, 10));
}

TEST_F(VolumeTest, ABitmapOfAnotherShapeIsRefused) {
  { Open(); }
  std::ofstream(dir_ + "/v/bitmap", std::ios::binary | std::ios::trunc) << "FERRYBM1garbage";
  VolumeOptions o;
  o.dir = dir_ + "/v";
  o.manifest = manifest_;
  o.source = &source_;
  auto v = Volume::Open(o);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), ErrorCode::kCorruption);
}

TEST_F(VolumeTest, ClonesSharingATransferCacheFetchEachChunkOnce) {
  ChunkCache cache(&source_, 64 << 20);
  std::vector<std::unique_ptr<Volume>> clones;
  for (int i = 0; i < 20; ++i) clones.push_back(Open("clone" + std::to_string(i), 0, &cache));
  std::vector<std::thread> threads;
  for (auto& c : clones) threads.emplace_back([&] { EXPECT_EQ(ReadAll(*c), image_); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(source_.fetches, 7);  // once per distinct non-zero chunk, for 20 clones
  uint64_t from_origin = 0, from_cache = 0;
  for (auto& c : clones) {
    auto vs = c->stats();
    EXPECT_EQ(vs.origin_bytes + vs.cache_bytes, vs.fetched_bytes);
    from_origin += vs.origin_bytes;
    from_cache += vs.cache_bytes;
  }
  EXPECT_EQ(from_origin, image_.size() - kChunk);  // each chunk's bytes once, by whichever clone went first
  EXPECT_EQ(from_cache, 19 * (image_.size() - kChunk));
  auto s = cache.stats();
  EXPECT_EQ(s.source_bytes, image_.size() - kChunk);
  EXPECT_EQ(s.hits + s.coalesced + s.misses, 20u * 7);
  EXPECT_LT(s.stored_bytes, 7 * kChunk + 7 * 600);  // random data: about its own size, compressed
}

TEST_F(VolumeTest, ConcurrentFillsCommitTheirBitsInGroupsThatSurviveAReopen) {
  // 301 chunks (bitmap bytes shared by fills of neighbouring chunks), with
  // triggers and background fills at once.
  image_.assign(300 * kChunk + 17, '\0');
  std::mt19937_64 rng(3);
  for (auto& c : image_) c = static_cast<char>(rng());
  manifest_.image_size = image_.size();
  manifest_.chunks.assign(manifest_.ChunkCount(), "");
  source_.chunks.clear();
  for (uint64_t i = 0; i < manifest_.ChunkCount(); ++i) {
    std::string c = image_.substr(i * kChunk, manifest_.ChunkLength(i));
    manifest_.chunks[i] = HexLower(Sha256(c));
    source_.chunks[manifest_.chunks[i]] = c;
  }
  {
    auto v = Open();
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&] {
        while (!v->complete()) EXPECT_TRUE(v->HydrateNext().ok());
      });
    }
    threads.emplace_back([&] {
      std::string buf(100, 'x');
      for (uint64_t c = 0; c < manifest_.ChunkCount(); c += 7) EXPECT_TRUE(v->Read(c * kChunk, 100, buf.data()).ok());
    });
    for (auto& t : threads) t.join();
    EXPECT_EQ(v->stats().present, manifest_.ChunkCount());
    EXPECT_EQ(source_.fetches, static_cast<int>(manifest_.ChunkCount()));  // each chunk once
  }
  int before = source_.fetches;
  auto v = Open();
  EXPECT_TRUE(v->complete());  // every bit was made durable
  EXPECT_EQ(ReadAll(*v), image_);
  EXPECT_EQ(source_.fetches, before);
}

TEST_F(VolumeTest, ATriggerJoiningABackgroundFetchWaitingAtTheGateMakesItUrgent) {
  manifest_.prefetch = {2};
  FetchGate gate(1);
  auto v = Open("v", 0, nullptr, &gate);
  auto held = gate.Acquire(FetchPriority::kBackground);  // the only slot, held
  std::thread hydrator([&] { EXPECT_TRUE(v->HydrateNext().ok()); });  // chunk 2, background
  for (int i = 0; i < 2000 && gate.waiting() < 1; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(gate.waiting(), 1);
  EXPECT_EQ(gate.urgent_waiting(), 0);
  std::string buf(10, 'x');
  std::thread reader([&] { EXPECT_TRUE(v->Read(2 * kChunk, 10, buf.data()).ok()); });  // joins that fetch
  for (int i = 0; i < 2000 && gate.urgent_waiting() < 1; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(gate.urgent_waiting(), 1);  // the waiting fetch now goes ahead of background work
  EXPECT_EQ(gate.waiting(), 1);         // still one fetch: the reader joined it
  gate.Release(held);
  hydrator.join();
  reader.join();
  EXPECT_EQ(buf, image_.substr(2 * kChunk, 10));
  EXPECT_EQ(source_.fetches, 1);
}

}  // namespace
}  // namespace ferry::volume
