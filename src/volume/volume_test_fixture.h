#pragma once
// The fixture volume tests share: an 8-chunk image (chunk 3 all zeros, 7 a
// short tail) served by a FakeSource that counts, holds or fails fetches.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "crypto/digest.h"
#include "volume/volume.h"

namespace ferry::volume::test {

constexpr uint64_t kChunk = 4096;

// Chunks by hash, counting fetches; can hold fetches until released, or fail.
class FakeSource : public ChunkSource {
 public:
  std::map<std::string, std::string> chunks;
  std::atomic<int> fetches{0};
  std::vector<std::string> order;  // hashes in fetch order; guarded by mu_ (read with Order())
  bool hold = false;               // guarded by mu_ once fetches run
  std::atomic<bool> fail{false};

  Result<std::string> Fetch(const std::string& hash, bool) override {
    fetches++;
    {
      std::unique_lock lock(mu_);
      order.push_back(hash);
      cv_.wait(lock, [&] { return !hold; });
    }
    if (fail) return Status(ErrorCode::kNetwork, "origin down");
    auto it = chunks.find(hash);
    if (it == chunks.end()) return Status(ErrorCode::kNotFound, "no chunk");
    return it->second;
  }
  std::vector<std::string> Order() const {
    std::lock_guard lock(mu_);
    return order;
  }
  void Release() {
    std::lock_guard lock(mu_);
    hold = false;
    cv_.notify_all();
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
};

class VolumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-volume-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    // 8 chunks: 0-2 random, 3 zeros, 4-6 random, 7 a short random tail.
    image_.assign(7 * kChunk + 1000, '\0');
    std::mt19937_64 rng(9);
    for (size_t i = 0; i < image_.size(); ++i) {
      if (i / kChunk != 3) image_[i] = static_cast<char>(rng());
    }
    manifest_.name = "img";
    manifest_.image_size = image_.size();
    manifest_.chunk_size = kChunk;
    manifest_.chunks.resize(manifest_.ChunkCount());
    for (uint64_t i = 0; i < manifest_.ChunkCount(); ++i) {
      std::string c = image_.substr(i * kChunk, manifest_.ChunkLength(i));
      if (c.find_first_not_of('\0') == std::string::npos) continue;
      std::string h = HexLower(Sha256(c));
      manifest_.chunks[i] = h;
      source_.chunks[h] = c;
    }
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Volume> Open(const std::string& name = "v", uint64_t size = 0, ChunkSource* src = nullptr,
                               FetchGate* gate = nullptr) {
    VolumeOptions o;
    o.dir = dir_ + "/" + name;
    o.size = size;
    o.manifest = manifest_;
    o.source = src ? src : &source_;
    o.gate = gate;
    o.prefetch_parallel = prefetch_parallel_;
    o.readahead = readahead_;
    o.read_around = read_around_;
    o.trigger_waits = &trigger_waits_;
    o.before_install = before_install_;
    auto v = Volume::Open(o);
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    return v.ok() ? std::move(v).value() : nullptr;
  }
  std::string ReadAll(Volume& v) {
    std::string out(v.size(), 'x');
    EXPECT_TRUE(v.Read(0, v.size(), out.data()).ok());
    return out;
  }

  std::string dir_;
  std::string image_;
  snapshot::Manifest manifest_;
  FakeSource source_;
  int prefetch_parallel_ = 6;
  int readahead_ = 0;
  int read_around_ = 0;
  LatencyHistogram trigger_waits_;
  std::function<Status(uint64_t)> before_install_;
};

}  // namespace ferry::volume::test
