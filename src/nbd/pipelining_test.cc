// Pipelined transmission, seen from a raw client (nbd/test_client.h):
// requests of one connection reach the device together, replies come back
// as requests complete (out of order, matched by handle), a flood is held
// to the per-connection bounds, and structured replies carry holes.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "nbd/server.h"
#include "nbd/test_client.h"

namespace ferry::nbd {
namespace {

using namespace std::chrono_literals;

// Byte at offset o: a pattern each test can check.
char PatternAt(uint64_t o) { return static_cast<char>((o / 4096) * 7 + (o % 251)); }

// A device whose reads and writes wait at a gate: until `release_at` calls
// are inside at once, until released, or (so a broken server fails the
// test rather than hanging it) 10 s. It counts calls inside at once.
class GatedDevice : public BlockDevice {
 public:
  explicit GatedDevice(int release_at) : release_at_(release_at) {}
  uint64_t size() const override { return 64 << 20; }
  bool Ready(uint64_t, uint64_t) const override { return false; }  // as a volume's missing chunks
  Status Read(uint64_t offset, uint64_t len, char* out) override {
    Enter();
    for (uint64_t i = 0; i < len; ++i) out[i] = PatternAt(offset + i);
    // Reads complete last-come first: each waits for those after it.
    {
      std::unique_lock lock(mu_);
      uint64_t index = offset / (1 << 20);
      cv_.wait_for(lock, 10s, [&] { return !reverse_ || finished_ >= reverse_ - 1 - index; });
      ++finished_;
      cv_.notify_all();
    }
    Leave();
    return Status::Ok();
  }
  Status Write(uint64_t, std::string_view data, bool) override {
    Enter();
    written_ += data.size();
    Leave();
    return Status::Ok();
  }
  Status Flush() override { return Status::Ok(); }
  Status Trim(uint64_t, uint64_t, bool) override { return Status::Ok(); }
  Status WriteZeroes(uint64_t, uint64_t, bool) override { return Status::Ok(); }
  Status Extents(uint64_t offset, uint64_t len, std::vector<Extent>* out) override {
    // [0, 1 MiB) data, then holes: a read across the boundary gets both.
    out->clear();
    uint64_t end = offset + len, mib = 1 << 20;
    if (offset < mib) out->push_back(Extent{std::min(end, mib) - offset, false});
    if (end > mib) out->push_back(Extent{end - std::max(offset, mib), true});
    return Status::Ok();
  }

  void Release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  void CompleteInReverse(uint64_t n) { reverse_ = n; }
  int most_inside() const {
    std::lock_guard lock(mu_);
    return most_;
  }
  int inside() const {
    std::lock_guard lock(mu_);
    return inside_;
  }

 private:
  void Enter() {
    std::unique_lock lock(mu_);
    ++inside_;
    most_ = std::max(most_, inside_);
    cv_.notify_all();
    cv_.wait_for(lock, 10s, [&] { return released_ || inside_ >= release_at_; });
    released_ = released_ || inside_ >= release_at_;
  }
  void Leave() {
    std::lock_guard lock(mu_);
    --inside_;
  }
  mutable std::mutex mu_;
  std::condition_variable cv_;
  const int release_at_;
  int inside_ = 0, most_ = 0;
  bool released_ = false;
  uint64_t reverse_ = 0, finished_ = 0;
  std::atomic<uint64_t> written_{0};
};

class PipeliningTest : public ::testing::Test {
 protected:
  void Serve(std::shared_ptr<GatedDevice> dev, NbdServerOptions o = {}) {
    dev_ = std::move(dev);
    o.listen = "127.0.0.1:0";
    server_ = std::make_unique<NbdServer>(o);
    server_->AddExport("gated", dev_);
    ASSERT_TRUE(server_->Start().ok());
  }
  std::unique_ptr<TestClient> Client(bool structured = false) {
    std::string error;
    auto c = TestClient::Connect(server_->port(), "gated", structured, &error);
    EXPECT_TRUE(c) << error;
    return c;
  }
  std::shared_ptr<GatedDevice> dev_;
  std::unique_ptr<NbdServer> server_;
};

TEST_F(PipeliningTest, SixteenReadsOfOneConnectionReachTheDeviceTogetherAndReturnOutOfOrder) {
  // The gate opens only when all 16 are inside at once: a server that runs
  // one request at a time leaves the first waiting (10 s) alone.
  auto dev = std::make_shared<GatedDevice>(16);
  dev->CompleteInReverse(16);
  Serve(dev);
  auto c = Client();
  ASSERT_TRUE(c);
  constexpr uint32_t kLen = 4096;
  for (uint64_t k = 0; k < 16; ++k) ASSERT_TRUE(c->Send(Request{0, kCmdRead, 100 + k, k << 20, kLen}));
  std::vector<uint64_t> order;
  for (int i = 0; i < 16; ++i) {
    TestClient::Reply r;
    ASSERT_TRUE(c->Receive(&r, kLen));
    ASSERT_EQ(r.error, 0u);
    ASSERT_GE(r.handle, 100u);
    ASSERT_LT(r.handle, 116u);
    uint64_t offset = (r.handle - 100) << 20;
    for (uint32_t i2 = 0; i2 < kLen; i2 += 509) ASSERT_EQ(r.payload[i2], PatternAt(offset + i2)) << r.handle;
    order.push_back(r.handle);
  }
  EXPECT_EQ(dev_->most_inside(), 16) << "all 16 reads were in the device at once";
  EXPECT_EQ(std::set<uint64_t>(order.begin(), order.end()).size(), 16u) << "one reply per handle";
  EXPECT_NE(order.front(), 100u) << "the first request completed last, so its reply is not first";
  EXPECT_GE(server_->stats().most_in_flight, 16u);
}

TEST_F(PipeliningTest, AFloodIsHeldToTheBoundsPerConnection) {
  auto dev = std::make_shared<GatedDevice>(1 << 30);  // opened by hand
  NbdServerOptions o;
  o.max_requests = 8;
  o.max_request_bytes = 1 << 20;
  Serve(dev, o);
  auto c = Client();
  ASSERT_TRUE(c);
  // 200 reads of 16 KiB: the count bound (8) holds first.
  constexpr uint32_t kLen = 16 << 10;
  for (uint64_t k = 0; k < 200; ++k) ASSERT_TRUE(c->Send(Request{0, kCmdRead, k, k * kLen, kLen}));
  for (int i = 0; i < 2000 && dev_->inside() < 8; ++i) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(200ms);  // a server past its bound would have let more in by now
  EXPECT_EQ(dev_->inside(), 8);
  dev_->Release();
  for (int i = 0; i < 200; ++i) {
    TestClient::Reply r;
    ASSERT_TRUE(c->Receive(&r, kLen));
    ASSERT_EQ(r.error, 0u);
    EXPECT_EQ(r.payload[100], PatternAt(r.handle * kLen + 100));
  }
  EXPECT_LE(dev_->most_inside(), 8);
  EXPECT_LE(server_->stats().most_in_flight, 8u);
}

TEST_F(PipeliningTest, WritesAreHeldToTheByteBound) {
  auto dev = std::make_shared<GatedDevice>(1 << 30);
  NbdServerOptions o;
  o.max_request_bytes = 1 << 20;  // four writes of 256 KiB
  Serve(dev, o);
  auto c = Client();
  ASSERT_TRUE(c);
  const std::string payload(256 << 10, 'w');
  std::thread sender([&] {
    for (uint64_t k = 0; k < 40; ++k) {
      if (!c->Send(Request{0, kCmdWrite, k, k * payload.size(), static_cast<uint32_t>(payload.size())}, payload)) {
        return;
      }
    }
  });
  for (int i = 0; i < 2000 && dev_->inside() < 4; ++i) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(dev_->inside(), 4) << "1 MiB of payloads in flight, no more";
  dev_->Release();
  sender.join();
  for (int i = 0; i < 40; ++i) {
    TestClient::Reply r;
    ASSERT_TRUE(c->Receive(&r, 0));
    EXPECT_EQ(r.error, 0u);
  }
  EXPECT_LE(dev_->most_inside(), 4);
}

TEST_F(PipeliningTest, StructuredReadsSendHolesAndBlockStatusNamesThem) {
  auto dev = std::make_shared<GatedDevice>(1);
  Serve(dev);
  auto c = Client(/*structured=*/true);
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->meta());
  EXPECT_TRUE(c->tx_flags() & kTxSendDf);
  // 64 KiB across the 1 MiB boundary: 32 KiB of data, then a 32 KiB hole.
  const uint64_t at = (1 << 20) - (32 << 10);
  ASSERT_TRUE(c->Send(Request{0, kCmdRead, 7, at, 64 << 10}));
  TestClient::Reply r;
  ASSERT_TRUE(c->Receive(&r, 0));
  ASSERT_TRUE(r.structured);
  EXPECT_EQ(r.type, kReplyOffsetData);
  EXPECT_EQ(r.flags & kReplyFlagDone, 0);
  ASSERT_EQ(r.payload.size(), 8u + (32 << 10));
  EXPECT_EQ(r.payload[8 + 5], PatternAt(at + 5));
  ASSERT_TRUE(c->Receive(&r, 0));
  EXPECT_EQ(r.type, kReplyOffsetHole);
  EXPECT_EQ(r.flags & kReplyFlagDone, kReplyFlagDone);
  ASSERT_EQ(r.payload.size(), 12u);
  // BLOCK_STATUS over the same range: data then hole|zero.
  ASSERT_TRUE(c->Send(Request{0, kCmdBlockStatus, 8, at, 64 << 10}));
  ASSERT_TRUE(c->Receive(&r, 0));
  EXPECT_EQ(r.type, kReplyBlockStatus);
  ASSERT_EQ(r.payload.size(), 4u + 2 * 8);
  auto u = [&](size_t i) { return Get32(reinterpret_cast<const unsigned char*>(r.payload.data()) + i); };
  EXPECT_EQ(u(0), kBaseAllocationId);
  EXPECT_EQ(u(4), 32u << 10);
  EXPECT_EQ(u(8), 0u);
  EXPECT_EQ(u(12), 32u << 10);
  EXPECT_EQ(u(16), kStateHole | kStateZero);
  // A read error on a structured connection is an error chunk, never a
  // simple reply: past the end.
  ASSERT_TRUE(c->Send(Request{0, kCmdRead, 9, 64 << 20, 4096}));
  ASSERT_TRUE(c->Receive(&r, 0));
  EXPECT_TRUE(r.structured);
  EXPECT_EQ(r.type, kReplyError);
}

TEST_F(PipeliningTest, BlockStatusWithoutAContextIsRefused) {
  auto dev = std::make_shared<GatedDevice>(1);
  Serve(dev);
  auto c = Client(/*structured=*/false);
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->Send(Request{0, kCmdBlockStatus, 1, 0, 4096}));
  TestClient::Reply r;
  ASSERT_TRUE(c->Receive(&r, 0));
  EXPECT_FALSE(r.structured);
  EXPECT_EQ(r.error, kEinval);
}

}  // namespace
}  // namespace ferry::nbd
