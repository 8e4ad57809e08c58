// Reads answered from their fetched chunks while the chunks are installed
// (Volume::Land): what readers, writers and failures see meanwhile.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "crypto/digest.h"
#include "volume/volume.h"
#include "volume/volume_test_fixture.h"

namespace ferry::volume {
namespace {

using namespace std::chrono_literals;
using test::kChunk;
using test::VolumeTest;

// Holds the installs of landed chunks until Release() (then they run, or
// fail with `fail_with` if set); counts them.
class InstallLatch {
 public:
  std::function<Status(uint64_t)> Hook() {
    return [this](uint64_t) {
      std::unique_lock lock(mu_);
      const int n = ++started_;
      cv_.wait(lock, [&] { return !hold_; });
      return fail_first_ && n == 1 ? Status(ErrorCode::kIoError, "disk full") : Status::Ok();
    };
  }
  void FailTheFirst() { fail_first_ = true; }
  void Release() {
    std::lock_guard lock(mu_);
    hold_ = false;
    cv_.notify_all();
  }
  int started() {
    std::lock_guard lock(mu_);
    return started_;
  }
  // Released when it goes out of scope: declared after a volume, it lets a
  // failed assertion end the test instead of the volume's destructor waiting.
  struct Guard {
    InstallLatch& latch;
    ~Guard() { latch.Release(); }
  };

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool hold_ = true;
  bool fail_first_ = false;
  int started_ = 0;
};

TEST_F(VolumeTest, AReadIsAnsweredFromItsFetchWhileTheChunkIsInstalled) {
  InstallLatch latch;
  before_install_ = latch.Hook();
  {
    auto v = Open();
    ASSERT_NE(v, nullptr);
    InstallLatch::Guard release{latch};
    std::string buf(300, 'x');
    ASSERT_TRUE(v->Read(kChunk - 100, 300, buf.data()).ok());  // chunks 0 and 1, both held
    EXPECT_EQ(buf, image_.substr(kChunk - 100, 300));
    EXPECT_EQ(v->stats().present, 1u);  // only the zero chunk: neither bit is durable yet
    EXPECT_FALSE(v->Ready(0, kChunk));  // a write there would wait for the install
    std::string tail(kChunk + 1000, 'x');
    ASSERT_TRUE(v->Read(6 * kChunk, tail.size(), tail.data()).ok());  // chunks 6 and 7 (short)
    EXPECT_EQ(tail, image_.substr(6 * kChunk));
    // Held 1, fetched and held 2, the zero chunk 3 from the file, fetched and held 4.
    std::string span(kChunk * 4, 'x');
    ASSERT_TRUE(v->Read(kChunk, span.size(), span.data()).ok());
    EXPECT_EQ(span, image_.substr(kChunk, span.size()));
    EXPECT_EQ(source_.fetches, 6);  // 0, 1, 6, 7, 2 and 4: a held chunk is never fetched again
    latch.Release();
    v->Settle();
    EXPECT_EQ(v->stats().present, 7u);
    EXPECT_EQ(latch.started(), 6);
  }
  auto v = Open();  // the bits were made durable
  EXPECT_EQ(v->stats().present, 7u);
  // A larger volume: the snapshot's short last chunk held, zeros past its bytes.
  InstallLatch held;
  before_install_ = held.Hook();
  auto big = Open("big", 9 * kChunk);
  ASSERT_NE(big, nullptr);
  InstallLatch::Guard release{held};
  std::string end(2 * kChunk, 'x');
  ASSERT_TRUE(big->Read(7 * kChunk, end.size(), end.data()).ok());
  EXPECT_EQ(end, image_.substr(7 * kChunk) + std::string(2 * kChunk - 1000, '\0'));
}

TEST_F(VolumeTest, AShortLastChunkIsInstalledWithZerosToTheChunksEnd) {
  // Bytes past the snapshot's end inside its last chunk (left by a
  // whole-chunk write a crash cut off before its bit): never shown.
  { ASSERT_NE(Open("big", 9 * kChunk), nullptr); }
  {
    std::ofstream f(dir_ + "/big/data", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(7 * kChunk + 1000);
    f << std::string(kChunk - 1000, 'q');
  }
  auto v = Open("big", 9 * kChunk);
  ASSERT_NE(v, nullptr);
  const std::string expect = image_.substr(7 * kChunk) + std::string(kChunk - 1000, '\0');
  std::string got(kChunk, 'x');
  ASSERT_TRUE(v->Read(7 * kChunk, kChunk, got.data()).ok());  // from the landed bytes
  EXPECT_EQ(got, expect);
  v->Settle();
  ASSERT_TRUE(v->Read(7 * kChunk, kChunk, got.data()).ok());  // from the file
  EXPECT_EQ(got, expect);
}

TEST_F(VolumeTest, WritesIntoALandedChunkWaitForItsInstall) {
  InstallLatch latch;
  before_install_ = latch.Hook();
  auto v = Open();
  ASSERT_NE(v, nullptr);
  std::atomic<int> started{0}, done{0};
  std::string whole(kChunk, 'w');
  std::vector<std::jthread> writers;
  InstallLatch::Guard release{latch};  // before the writers are joined
  std::string buf(10, 'x');
  ASSERT_TRUE(v->Read(kChunk + 1, 10, buf.data()).ok());      // chunk 1 landed, install held
  ASSERT_TRUE(v->Read(4 * kChunk + 1, 10, buf.data()).ok());  // chunk 4 too
  writers.emplace_back([&] {
    ++started;
    EXPECT_TRUE(v->Write(kChunk + 5, "abc", false).ok());
    ++done;
  });
  writers.emplace_back([&] {
    ++started;
    EXPECT_TRUE(v->Write(4 * kChunk, whole, false).ok());
    ++done;
  });
  while (started < 2) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(done, 0);  // neither may land its bytes under the install's
  latch.Release();
  for (auto& w : writers) w.join();
  std::string expect = image_.substr(kChunk, kChunk);
  expect.replace(5, 3, "abc");
  std::string got(kChunk, 'x');
  ASSERT_TRUE(v->Read(kChunk, kChunk, got.data()).ok());
  EXPECT_EQ(got, expect);
  ASSERT_TRUE(v->Read(4 * kChunk, kChunk, got.data()).ok());
  EXPECT_EQ(got, whole);
  EXPECT_EQ(source_.fetches, 2);
}

TEST_F(VolumeTest, PastSixtyFourLandedChunksReadsWaitForTheirInstalls) {
  image_.assign(70 * kChunk, '\0');
  std::mt19937_64 rng(5);
  for (auto& c : image_) c = static_cast<char>(rng());
  manifest_.image_size = image_.size();
  manifest_.chunks.assign(manifest_.ChunkCount(), "");
  source_.chunks.clear();
  for (uint64_t i = 0; i < manifest_.ChunkCount(); ++i) {
    std::string c = image_.substr(i * kChunk, kChunk);
    manifest_.chunks[i] = HexLower(Sha256(c));
    source_.chunks[manifest_.chunks[i]] = c;
  }
  InstallLatch latch;
  before_install_ = latch.Hook();
  auto v = Open();
  ASSERT_NE(v, nullptr);
  InstallLatch::Guard release{latch};
  std::string buf(10, 'x');
  for (uint64_t c = 0; c < 70; ++c) {
    ASSERT_TRUE(v->Read(c * kChunk, 10, buf.data()).ok());
    EXPECT_EQ(buf, image_.substr(c * kChunk, 10));
  }
  for (int i = 0; i < 5000 && latch.started() < 64; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(latch.started(), 64);        // 64 held in memory
  EXPECT_EQ(v->stats().present, 6u);     // the other 6 installed before their reads returned
  latch.Release();
  v->Settle();
  EXPECT_TRUE(v->complete());
}

TEST_F(VolumeTest, AFailedInstallLeavesTheChunkMissingAndItIsFetchedAgain) {
  InstallLatch latch;
  latch.FailTheFirst();
  before_install_ = latch.Hook();
  auto v = Open();
  ASSERT_NE(v, nullptr);
  InstallLatch::Guard release{latch};
  std::string buf(10, 'x');
  ASSERT_TRUE(v->Read(2 * kChunk, 10, buf.data()).ok());
  EXPECT_EQ(buf, image_.substr(2 * kChunk, 10));  // the read had its bytes; then the install fails
  latch.Release();
  v->Settle();
  EXPECT_EQ(v->stats().present, 1u);
  EXPECT_EQ(v->stats().fetch_errors, 1u);
  ASSERT_TRUE(v->Write(2 * kChunk + 3, "xyz", true).ok());  // a writer fetches it anew, installed at once
  EXPECT_EQ(source_.fetches, 2);
  ASSERT_TRUE(v->Read(2 * kChunk, 10, buf.data()).ok());
  EXPECT_EQ(buf, image_.substr(2 * kChunk, 3) + "xyz" + image_.substr(2 * kChunk + 6, 4));
  EXPECT_EQ(v->stats().present, 2u);
}

}  // namespace
}  // namespace ferry::volume
