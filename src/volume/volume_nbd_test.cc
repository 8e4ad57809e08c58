// A lazy volume behind the NBD server, driven by clients we did not write
// (qemu-io, qemu-img, nbdinfo) and by the raw test client: a guest's
// parallel reads of missing chunks fetch together; block status and a
// whole-image copy fetch nothing a zero chunk would; CACHE hydrates ahead.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>

#include "base/test_shell.h"
#include "base/test_temp_dir.h"
#include "crypto/digest.h"
#include "nbd/server.h"
#include "nbd/test_client.h"
#include "volume/fetch_gate.h"
#include "volume/volume.h"

namespace ferry::volume {
namespace {

using namespace std::chrono_literals;

constexpr uint64_t kNbdChunk = 64 << 10;
constexpr uint64_t kChunks = 64;

// Chunks by hash. Fetches wait at a barrier until `meet` of them are in
// at once (or 10 s, so a serialising server fails rather than hangs), and
// are counted: all, and the most at once.
class CountingSource : public ChunkSource {
 public:
  std::map<std::string, std::string> chunks;
  std::atomic<int> meet{1};  // set by the test while the daemon's threads may fetch
  Result<std::string> Fetch(const std::string& hash, bool) override {
    {
      std::unique_lock lock(mu_);
      ++fetches_;
      ++inside_;
      most_ = std::max(most_, inside_);
      cv_.notify_all();
      cv_.wait_for(lock, 10s, [&] { return met_ || inside_ >= meet; });
      met_ = true;
      --inside_;
    }
    auto it = chunks.find(hash);
    if (it == chunks.end()) return Status(ErrorCode::kNotFound, "no chunk " + hash);
    return it->second;
  }
  int fetches() const {
    std::lock_guard lock(mu_);
    return fetches_;
  }
  int most() const {
    std::lock_guard lock(mu_);
    return most_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int fetches_ = 0, inside_ = 0, most_ = 0;
  bool met_ = false;
};

class VolumeNbdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveTool("qemu-io") || !HaveTool("qemu-img") || !HaveTool("nbdinfo")) {
      FERRY_SKIP_WITHOUT_PEER("qemu-utils / libnbd-bin not installed (make setup)");
    }
    // 64 chunks of 64 KiB: every fourth all zeros, the rest random.
    image_.assign(kChunks * kNbdChunk, '\0');
    std::mt19937_64 rng(11);
    snapshot::Manifest m;
    m.name = "img";
    m.image_size = image_.size();
    m.chunk_size = kNbdChunk;
    m.chunks.resize(kChunks);
    for (uint64_t i = 0; i < kChunks; ++i) {
      if (i % 4 == 3) continue;
      for (uint64_t b = i * kNbdChunk; b < (i + 1) * kNbdChunk; ++b) image_[b] = static_cast<char>(rng());
      std::string c = image_.substr(i * kNbdChunk, kNbdChunk);
      m.chunks[i] = HexLower(Sha256(c));
      source_.chunks[m.chunks[i]] = c;
    }
    VolumeOptions o;
    o.dir = dir_ / "vol";
    o.manifest = m;
    o.source = &source_;
    o.gate = &gate_;
    auto v = Volume::Open(o);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    volume_ = std::shared_ptr<Volume>(std::move(v).value());
    nbd::NbdServerOptions n;
    n.listen = "127.0.0.1:0";
    server_ = std::make_unique<nbd::NbdServer>(n);
    server_->AddExport("vol", volume_);
    ASSERT_TRUE(server_->Start().ok());
    uri_ = "nbd://127.0.0.1:" + std::to_string(server_->port()) + "/vol";
  }
  static constexpr int kNonZero = kChunks - kChunks / 4;
  TestTempDir dir_;
  std::string image_, uri_;
  CountingSource source_;
  FetchGate gate_{16};
  std::shared_ptr<Volume> volume_;
  std::unique_ptr<nbd::NbdServer> server_;
};

TEST_F(VolumeNbdTest, SixteenParallelReadsOfMissingChunksFetchTogether) {
  // qemu-io's aio_read keeps all 16 in flight on its one connection; the
  // source lets fetches go only when 16 are in at once: one trigger's time.
  source_.meet = 16;
  std::string cmds;
  std::vector<uint64_t> picked;
  for (uint64_t i = 0; picked.size() < 16; ++i) {
    if (i % 4 != 3) picked.push_back(i);
  }
  for (uint64_t c : picked) cmds += " -c 'aio_read " + std::to_string(c * kNbdChunk + 512) + " 4096'";
  auto start = std::chrono::steady_clock::now();
  ShellRun io = Shell("qemu-io -f raw" + cmds + " -c aio_flush " + uri_);
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(io.code, 0) << io.out;
  EXPECT_EQ(source_.most(), 16) << "the 16 fetches were in flight at once";
  EXPECT_EQ(source_.fetches(), 16);
  EXPECT_EQ(volume_->stats().triggers, 16u);
  EXPECT_LT(took, 9s) << "no fetch waited out the barrier";
  std::string got(4096, '\0');
  ASSERT_TRUE(volume_->Read(picked[5] * kNbdChunk + 512, 4096, got.data()).ok());
  EXPECT_EQ(got, image_.substr(picked[5] * kNbdChunk + 512, 4096));
}

TEST_F(VolumeNbdTest, BlockStatusOfAFreshVolumeFetchesNothing) {
  ShellRun map = Shell("nbdinfo --map --totals " + uri_);
  ASSERT_EQ(map.code, 0) << map.out;
  // A quarter of the image is the snapshot's zero chunks: hole,zero.
  EXPECT_NE(map.out.find(std::to_string(kChunks / 4 * kNbdChunk)), std::string::npos) << map.out;
  EXPECT_NE(map.out.find("hole,zero"), std::string::npos) << map.out;
  ShellRun qmap = Shell("qemu-img map --output=json -f raw " + uri_);
  ASSERT_EQ(qmap.code, 0) << qmap.out;
  EXPECT_NE(qmap.out.find("\"start\": " + std::to_string(3 * kNbdChunk) + ", \"length\": " + std::to_string(kNbdChunk) +
                          ", \"depth\": 0, \"present\": true, \"zero\": true, \"data\": false"),
            std::string::npos)
      << qmap.out;
  EXPECT_EQ(source_.fetches(), 0) << "block status fetched chunks";
  EXPECT_EQ(volume_->stats().triggers, 0u);
}

TEST_F(VolumeNbdTest, QemuImgConvertFetchesOnlyNonZeroChunks) {
  std::string out = dir_ / "copy.qcow2";
  ShellRun conv = Shell("qemu-img convert -f raw -O qcow2 " + uri_ + " " + out);
  ASSERT_EQ(conv.code, 0) << conv.out;
  EXPECT_EQ(source_.fetches(), kNonZero);
  std::string raw = dir_ / "copy.raw";
  ASSERT_EQ(Shell("qemu-img convert -f qcow2 -O raw " + out + " " + raw).code, 0);
  EXPECT_EQ(ReadWholeFile(raw), image_);
}

TEST_F(VolumeNbdTest, TrimmedChunksBecomeHolesAndCacheHydratesAhead) {
  std::string error;
  auto c = nbd::TestClient::Connect(server_->port(), "vol", true, &error);
  ASSERT_TRUE(c) << error;
  EXPECT_TRUE(c->tx_flags() & nbd::kTxSendCache);
  // CACHE chunks 0-2: fetched as hints, not triggers.
  ASSERT_TRUE(c->Send(nbd::Request{0, nbd::kCmdCache, 1, 0, 3 * kNbdChunk}));
  nbd::TestClient::Reply r;
  ASSERT_TRUE(c->Receive(&r, 0));
  EXPECT_EQ(r.error, 0u);
  VolumeStats s = volume_->stats();
  EXPECT_EQ(s.hinted, 3u);
  EXPECT_EQ(s.triggers, 0u);
  EXPECT_TRUE(volume_->Ready(0, 3 * kNbdChunk));
  // TRIM chunk 1 whole: a hole (and zeros) from now on.
  ASSERT_TRUE(c->Send(nbd::Request{0, nbd::kCmdTrim, 2, kNbdChunk, kNbdChunk}));
  ASSERT_TRUE(c->Receive(&r, 0));
  EXPECT_EQ(r.error, 0u);
  ASSERT_TRUE(c->Send(nbd::Request{0, nbd::kCmdBlockStatus, 3, 0, 4 * kNbdChunk}));
  ASSERT_TRUE(c->Receive(&r, 0));
  ASSERT_EQ(r.type, nbd::kReplyBlockStatus);
  auto u = [&](size_t i) { return nbd::Get32(reinterpret_cast<const unsigned char*>(r.payload.data()) + i); };
  ASSERT_EQ(r.payload.size(), 4u + 4 * 8) << "data, hole, data, hole";
  EXPECT_EQ(u(4), kNbdChunk);
  EXPECT_EQ(u(8), 0u);
  EXPECT_EQ(u(12), kNbdChunk);
  EXPECT_EQ(u(16), nbd::kStateHole | nbd::kStateZero);
  EXPECT_EQ(u(20), kNbdChunk);  // chunk 2: data (hydrated)
  EXPECT_EQ(u(24), 0u);
  EXPECT_EQ(u(28), kNbdChunk);  // chunk 3: a zero chunk of the snapshot
  EXPECT_EQ(u(32), nbd::kStateHole | nbd::kStateZero);
  EXPECT_EQ(source_.fetches(), 3);
}

}  // namespace
}  // namespace ferry::volume
