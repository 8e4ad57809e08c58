// The replay client against ferry's own NBD server over loopback: guests
// replay a trace with reads, writes, a trim and a flush; reads are checked
// against the image; the write log verifies, and fails once a sector is
// spoiled.
#include "replay.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "base/test_temp_dir.h"
#include "nbd/file_device.h"
#include "nbd/server.h"
#include "verify.h"
#include "write_pattern.h"

namespace ferry::replay {
namespace {

using nbd::TraceOp;
using nbd::TraceRecord;

TEST(WritePattern, SectorsNameTheirWrite) {
  std::string p = WritePayload(7, 42, 1024, 1536);
  ASSERT_EQ(p.size(), 1536u);
  EXPECT_EQ(SectorWrite(std::string_view(p).substr(0, 512), 7, 1024), 42);
  EXPECT_EQ(SectorWrite(std::string_view(p).substr(512, 512), 7, 1536), 42);
  EXPECT_EQ(SectorWrite(std::string_view(p).substr(512, 512), 8, 1536), -1);  // another guest's
  EXPECT_EQ(SectorWrite(std::string_view(p).substr(512, 512), 7, 1024), -1);  // another place
  std::string spoiled = p.substr(0, 512);
  spoiled[300] ^= 1;
  EXPECT_EQ(SectorWrite(spoiled, 7, 1024), -1);
  EXPECT_NE(WritePayload(7, 43, 1024, 512), p.substr(0, 512));
}

TEST(WriteLog, RoundTripsAndRefusesMalformedLines) {
  std::string text = WriteLogLine(3, {'W', 1, 4096, 512, true}) +
                     WriteLogLine(3, {'T', 0, 0, 4096, false}) +
                     WriteLogLine(1, {'Z', 0, 512, 512, true});
  auto log = ParseWriteLog(text);
  ASSERT_TRUE(log.ok()) << log.status().message();
  ASSERT_EQ(log->size(), 2u);
  ASSERT_EQ((*log)[3].size(), 2u);
  EXPECT_EQ((*log)[3][0].op, 'T');  // sorted by sequence
  EXPECT_FALSE((*log)[3][0].acked);
  EXPECT_EQ((*log)[3][1].offset, 4096u);
  EXPECT_FALSE(ParseWriteLog("A 1 W 0 0\n").ok());
  EXPECT_FALSE(ParseWriteLog("X 1 W 0 0 512\n").ok());
  EXPECT_FALSE(ParseWriteLog("A 1 Q 0 0 512\n").ok());
}

class ReplayTest : public ::testing::Test {
 protected:
  static constexpr int kGuests = 12;
  static constexpr uint64_t kSize = 4 << 20;

  void SetUp() override {
    image_.resize(kSize);
    std::mt19937_64 rng(9);
    for (auto& c : image_) c = static_cast<char>(rng());
    nbd::NbdServerOptions o;
    o.listen = "127.0.0.1:0";
    server_ = std::make_unique<nbd::NbdServer>(o);
    for (int i = 0; i < kGuests; ++i) {
      std::string path = dir_.path() + "/v-" + std::to_string(i);
      std::ofstream(path, std::ios::binary) << image_;
      auto dev = nbd::FileDevice::Open(path, 0, false);
      ASSERT_TRUE(dev.ok());
      server_->AddExport("v-" + std::to_string(i),
                         std::shared_ptr<nbd::BlockDevice>(std::move(*dev)));
    }
    ASSERT_TRUE(server_->Start().ok());
    // A boot in miniature: reads (two in flight), a write read back, a
    // trim, a write-zeroes, a flush, think times of a few ms.
    trace_.size = kSize;
    trace_.records = {
        {0, 100, TraceOp::kRead, 0, 4096, false},
        {2000, 2100, TraceOp::kRead, 1 << 20, 65536, false},
        {2010, 2200, TraceOp::kRead, 2 << 20, 4096, false},
        {3000, 3100, TraceOp::kWrite, 8192, 8192, false},
        {3200, 3300, TraceOp::kRead, 8192, 4096, false},
        {3400, 3500, TraceOp::kTrim, 65536, 4096, false},
        {3600, 3700, TraceOp::kZero, 131072, 1024, false},
        {3800, 3900, TraceOp::kWrite, 12288, 4096, true},
        {4000, 4100, TraceOp::kFlush, 0, 0, false},
        {6000, 6100, TraceOp::kRead, 3 << 20, 131072, false},
    };
  }

  ReplayOptions Options() {
    ReplayOptions o;
    o.trace = &trace_;
    o.threads = 2;
    o.image = image_;
    o.timeout = std::chrono::seconds(60);
    for (int g = 0; g < kGuests; ++g) {
      o.guests.push_back({static_cast<uint64_t>(g), "127.0.0.1", server_->port(),
                          "v-" + std::to_string(g), std::chrono::milliseconds(g * 5)});
    }
    return o;
  }

  // Verifies every guest's changes through the device files.
  VerifyCounts Verify(const std::vector<GuestResult>& results) {
    VerifyCounts counts;
    for (size_t g = 0; g < results.size(); ++g) {
      std::string path = dir_.path() + "/v-" + std::to_string(g);
      auto read = [&](uint64_t offset, uint64_t length) -> Result<std::string> {
        std::ifstream in(path, std::ios::binary);
        std::string b(length, '\0');
        in.seekg(static_cast<std::streamoff>(offset));
        in.read(b.data(), static_cast<std::streamsize>(length));
        return b;
      };
      EXPECT_TRUE(VerifyGuest(g, results[g].writes, read, &counts).ok());
    }
    return counts;
  }

  TestTempDir dir_;
  std::string image_;
  nbd::Trace trace_;
  std::unique_ptr<nbd::NbdServer> server_;
};

TEST_F(ReplayTest, GuestsReplayTheTraceAndTheirWritesVerify) {
  auto results = RunReplay(Options());
  ASSERT_EQ(results.size(), static_cast<size_t>(kGuests));
  for (const auto& r : results) {
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.requests, trace_.records.size());
    EXPECT_EQ(r.read_bytes, 4096u + 65536 + 4096 + 4096 + 131072);
    EXPECT_EQ(r.written_bytes, 8192u + 4096);
    // The read of the guest's own write is not compared with the image.
    EXPECT_EQ(r.reads_checked, 4u);
    EXPECT_EQ(r.read_mismatches, 0u);
    EXPECT_EQ(r.writes.size(), 4u);  // two writes, a trim, a write-zeroes
    // The recorded think times add up to about 6 ms; the replay keeps them.
    EXPECT_GE(r.boot_ms, 5.0);
  }
  VerifyCounts counts = Verify(results);
  EXPECT_EQ(counts.changes, 4u * kGuests);
  // The second write lies inside the first: 16 sectors of writes, 8 trimmed, 2 zeroed.
  EXPECT_EQ(counts.sectors, (16u + 8 + 2) * kGuests);
  EXPECT_EQ(counts.lost, 0u) << counts.first_loss;

  // A sector of guest 3's first write spoiled: the check finds it.
  {
    std::fstream f(dir_.path() + "/v-3", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8192 + 512 + 100);
    f.put('!');
  }
  counts = Verify(results);
  EXPECT_EQ(counts.lost, 1u);
  EXPECT_NE(counts.first_loss.find("guest 3: the sector at 8704"), std::string::npos)
      << counts.first_loss;
}

TEST_F(ReplayTest, AReadThatDiffersFromTheImageIsCounted) {
  image_[(1 << 20) + 10] ^= 1;  // what the guests compare with, not what they read
  auto results = RunReplay(Options());
  for (const auto& r : results) {
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.read_mismatches, 1u);
  }
}

TEST_F(ReplayTest, AMissingExportFailsThatGuestOnly) {
  ReplayOptions o = Options();
  o.guests[5].export_name = "nope";
  auto results = RunReplay(o);
  EXPECT_FALSE(results[5].ok);
  EXPECT_NE(results[5].error.find("export nope refused"), std::string::npos) << results[5].error;
  EXPECT_TRUE(results[4].ok) << results[4].error;
}

}  // namespace
}  // namespace ferry::replay
