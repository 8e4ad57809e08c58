#include "volume/volume_snapshot.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <random>
#include <thread>

#include "base/test_temp_dir.h"
#include "snapshot/create.h"
#include "store/forwarding_store.h"
#include "store/local/local_store.h"
#include "volume/repository_source.h"

namespace ferry::volume {
namespace {

using namespace std::chrono_literals;
constexpr uint64_t kSnapChunk = 4096;

// A repository's store whose chunk uploads can be held until released,
// made to fail, and are counted.
class ChunkPutGate : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  Result<ObjectInfo> Put(std::string_view k, ByteSource& b, uint64_t n, const PutOptions& o) override {
    if (k.find("chunks/") != std::string_view::npos) {
      std::unique_lock lock(mu_);
      ++started_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return !hold_; });
      if (fail_) return Status(ErrorCode::kServerError, "injected");
      ++chunk_puts_;
    }
    return ForwardingStore::Put(k, b, n, o);
  }
  void Hold(bool on) {
    std::lock_guard lock(mu_);
    hold_ = on;
    cv_.notify_all();
  }
  void Fail(bool on) {
    std::lock_guard lock(mu_);
    fail_ = on;
  }
  void WaitStarted(int n) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return started_ >= n; });
  }
  int chunk_puts() {
    std::lock_guard lock(mu_);
    return chunk_puts_;
  }
  void Reset() {
    std::lock_guard lock(mu_);
    chunk_puts_ = started_ = 0;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool hold_ = false, fail_ = false;
  int started_ = 0, chunk_puts_ = 0;
};

class VolumeSnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LocalStoreOptions lo;
    lo.create_if_missing = true;
    lo.sync = false;
    inner_ = std::move(OpenLocalStore(tmp_ / "repo", lo)).value();
    auto gate = std::make_shared<ChunkPutGate>(*inner_);
    gate_ = gate.get();
    repo_ = std::make_unique<snapshot::Repository>(gate, "");
    // 8 chunks: 0-2 random, 3 zeros, 4-6 random, 7 a short random tail.
    image_.assign(7 * kSnapChunk + 1000, '\0');
    std::mt19937_64 rng(5);
    for (size_t i = 0; i < image_.size(); ++i) {
      if (i / kSnapChunk != 3) image_[i] = static_cast<char>(rng());
    }
    std::ofstream(tmp_ / "image.raw", std::ios::binary) << image_;
    snapshot::CreateOptions co;
    co.chunk_size = kSnapChunk;
    ASSERT_TRUE(snapshot::CreateSnapshot(tmp_ / "image.raw", *repo_, "base", co).ok());
    parent_ = std::move(repo_->GetManifest("base")).value();
    source_ = std::make_unique<RepositorySource>(repo_.get());
    gate_->Reset();
  }

  std::shared_ptr<Volume> Open(const std::string& name, const std::string& from = "base", uint64_t size = 0) {
    VolumeOptions o;
    o.dir = tmp_ / name;
    o.size = size;
    o.manifest = std::move(repo_->GetManifest(from)).value();
    o.source = source_.get();
    auto v = Volume::Open(std::move(o));
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    return v.ok() ? std::shared_ptr<Volume>(std::move(v).value()) : nullptr;
  }
  static std::string ReadAll(Volume& v) {
    std::string out(v.size(), 'x');
    EXPECT_TRUE(v.Read(0, v.size(), out.data()).ok());
    return out;
  }
  std::string ChunkOf(const std::string& snapshot, uint64_t i) {
    auto m = repo_->GetManifest(snapshot);
    EXPECT_TRUE(m.ok());
    if (m->chunks[i].empty()) return std::string(m->ChunkLength(i), '\0');
    return std::move(repo_->GetChunk(m->chunks[i])).value();
  }
  Result<VolumeSnapshotStats> Snapshot(const std::shared_ptr<Volume>& v, const std::string& name,
                                       int concurrency = 4) {
    FERRY_ASSIGN_OR_RETURN(auto s, VolumeSnapshot::Begin(v, repo_.get(), name));
    VolumeSnapshotOptions o;
    o.concurrency = concurrency;
    return s->Upload(o);
  }

  TestTempDir tmp_;
  std::unique_ptr<ObjectStore> inner_;
  ChunkPutGate* gate_ = nullptr;
  std::unique_ptr<snapshot::Repository> repo_;
  std::unique_ptr<RepositorySource> source_;
  std::string image_;
  snapshot::Manifest parent_;
};

TEST_F(VolumeSnapshotTest, OnlyChunksWrittenSinceCreationAreUploaded) {
  auto v = Open("v");
  EXPECT_EQ(ReadAll(*v), image_);  // hydrated whole: presence is not what counts
  ASSERT_TRUE(v->Write(1 * kSnapChunk, std::string(kSnapChunk, 'a'), false).ok());
  ASSERT_TRUE(v->Write(5 * kSnapChunk + 100, "hello", false).ok());
  ASSERT_TRUE(v->WriteZeroes(6 * kSnapChunk, kSnapChunk, false).ok());
  ASSERT_TRUE(v->Write(2 * kSnapChunk, image_.substr(2 * kSnapChunk, kSnapChunk), false).ok());  // the same bytes again
  EXPECT_EQ(v->stats().written, 4u);
  auto st = Snapshot(v, "next");
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->chunks, 8u);
  EXPECT_EQ(st->written_chunks, 4u);
  EXPECT_EQ(st->parent_chunks, 4u);
  EXPECT_EQ(st->uploaded_chunks, 2u);  // chunks 1 and 5
  EXPECT_EQ(st->uploaded_bytes, 2 * kSnapChunk);
  EXPECT_EQ(st->reused_chunks, 1u);  // chunk 2: the parent's hash
  EXPECT_EQ(st->zero_chunks, 1u);    // chunk 6
  EXPECT_EQ(gate_->chunk_puts(), 2);
  auto m = std::move(repo_->GetManifest("next")).value();
  for (uint64_t i : {0, 2, 3, 4, 7}) EXPECT_EQ(m.chunks[i], parent_.chunks[i]) << i;
  EXPECT_EQ(m.chunks[6], "");
  EXPECT_EQ(m.image_size, parent_.image_size);
  // A clone of the new snapshot holds what the volume holds.
  auto clone = Open("clone", "next");
  EXPECT_EQ(ReadAll(*clone), ReadAll(*v));
}

TEST_F(VolumeSnapshotTest, WritesDuringTheUploadGoAheadAndTheSnapshotKeepsTheOldBytes) {
  auto v = Open("v");
  ASSERT_TRUE(v->Write(1 * kSnapChunk, std::string(kSnapChunk, 'A'), false).ok());
  ASSERT_TRUE(v->Write(5 * kSnapChunk, std::string(kSnapChunk, 'B'), false).ok());
  gate_->Hold(true);
  auto snap = VolumeSnapshot::Begin(v, repo_.get(), "frozen");
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  std::future<Result<VolumeSnapshotStats>> upload = std::async(std::launch::async, [&] {
    VolumeSnapshotOptions o;
    o.concurrency = 1;  // chunk 1, then chunk 5
    return (*snap)->Upload(o);
  });
  gate_->WaitStarted(1);  // chunk 1 taken, its upload held; chunk 5 not taken yet
  // Writes (and reads) proceed while the upload is held: chunk 5's old
  // bytes are copied aside first, chunk 1 was taken already.
  auto writes = std::async(std::launch::async, [&] {
    EXPECT_TRUE(v->Write(1 * kSnapChunk, std::string(kSnapChunk, 'X'), false).ok());
    EXPECT_TRUE(v->Write(5 * kSnapChunk + 10, "YYYY", false).ok());
    EXPECT_TRUE(v->WriteZeroes(5 * kSnapChunk + 100, 50, false).ok());
    std::string buf(4, '?');
    EXPECT_TRUE(v->Read(5 * kSnapChunk + 10, 4, buf.data()).ok());
    EXPECT_EQ(buf, "YYYY");
  });
  ASSERT_EQ(writes.wait_for(10s), std::future_status::ready) << "a write waited for the upload";
  gate_->Hold(false);
  auto st = upload.get();
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->written_chunks, 2u);
  EXPECT_EQ(st->uploaded_chunks, 2u);
  EXPECT_EQ(st->spooled_chunks, 1u);
  EXPECT_EQ(ChunkOf("frozen", 1), std::string(kSnapChunk, 'A'));
  EXPECT_EQ(ChunkOf("frozen", 5), std::string(kSnapChunk, 'B'));
  std::string now(kSnapChunk, '?');
  ASSERT_TRUE(v->Read(5 * kSnapChunk, kSnapChunk, now.data()).ok());
  std::string want(kSnapChunk, 'B');
  want.replace(10, 4, "YYYY");
  want.replace(100, 50, std::string(50, '\0'));
  EXPECT_EQ(now, want);
  ASSERT_TRUE(v->Read(1 * kSnapChunk, kSnapChunk, now.data()).ok());
  EXPECT_EQ(now, std::string(kSnapChunk, 'X'));
  // Writes after the snapshot are in the next one.
  EXPECT_EQ(ChunkOf("frozen", 0), image_.substr(0, kSnapChunk));
  ASSERT_TRUE(Snapshot(v, "later").ok());
  EXPECT_EQ(ChunkOf("later", 5), want);
}

TEST_F(VolumeSnapshotTest, TheWrittenRecordSurvivesAReopen) {
  {
    auto v = Open("v");
    ASSERT_TRUE(v->Write(2 * kSnapChunk + 7, "abc", false).ok());
    ASSERT_TRUE(v->Trim(4 * kSnapChunk, kSnapChunk, false).ok());
  }
  auto v = Open("v");
  EXPECT_EQ(v->stats().written, 2u);
  auto st = Snapshot(v, "after-restart");
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->written_chunks, 2u);
  EXPECT_EQ(st->uploaded_chunks, 1u);
  EXPECT_EQ(st->zero_chunks, 1u);
  std::string want = image_.substr(2 * kSnapChunk, kSnapChunk);
  want.replace(7, 3, "abc");
  EXPECT_EQ(ChunkOf("after-restart", 2), want);
}

TEST_F(VolumeSnapshotTest, AVolumeWithoutAWrittenRecordCountsEveryPresentChunkAsWritten) {
  {
    auto v = Open("v");
    std::string buf(10, 'x');
    ASSERT_TRUE(v->Read(0, 10, buf.data()).ok());  // chunk 0 hydrated
    ASSERT_TRUE(v->Write(kSnapChunk, std::string(kSnapChunk, 'w'), false).ok());
  }
  std::filesystem::remove(tmp_ / "v/written");  // as a volume made before the record existed
  auto v = Open("v");
  EXPECT_EQ(v->stats().written, 3u);  // chunks 0, 1 and the zero chunk 3: present
  auto st = Snapshot(v, "legacy");
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->written_chunks, 3u);
  EXPECT_EQ(st->uploaded_chunks, 1u);  // only chunk 1 changed
  EXPECT_EQ(st->reused_chunks, 1u);
  EXPECT_EQ(st->zero_chunks, 1u);
}

TEST_F(VolumeSnapshotTest, AFailedUploadLeavesNoManifestAndTheVolumeServing) {
  auto v = Open("v");
  ASSERT_TRUE(v->Write(kSnapChunk, std::string(kSnapChunk, 'f'), false).ok());
  gate_->Fail(true);
  auto st = Snapshot(v, "broken");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(repo_->GetManifest("broken").status().code(), ErrorCode::kNotFound);
  ASSERT_TRUE(v->Write(kSnapChunk, std::string(kSnapChunk, 'g'), false).ok());
  std::string buf(kSnapChunk, '?');
  ASSERT_TRUE(v->Read(kSnapChunk, kSnapChunk, buf.data()).ok());
  EXPECT_EQ(buf, std::string(kSnapChunk, 'g'));
  gate_->Fail(false);
  ASSERT_TRUE(Snapshot(v, "broken").ok());  // the capture ended: another may start
  EXPECT_EQ(ChunkOf("broken", 1), std::string(kSnapChunk, 'g'));
}

TEST_F(VolumeSnapshotTest, TakenAndBadNamesAndASecondSnapshotAtOnceAreRefused) {
  auto v = Open("v");
  EXPECT_EQ(VolumeSnapshot::Begin(v, repo_.get(), "base").status().code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(VolumeSnapshot::Begin(v, repo_.get(), "no/slash").status().code(), ErrorCode::kInvalidArgument);
  auto first = VolumeSnapshot::Begin(v, repo_.get(), "one");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(VolumeSnapshot::Begin(v, repo_.get(), "two").status().code(), ErrorCode::kAlreadyExists);
  first->reset();  // never uploaded: no manifest, and the capture ends
  EXPECT_EQ(repo_->GetManifest("one").status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(VolumeSnapshot::Begin(v, repo_.get(), "two").ok());
}

TEST_F(VolumeSnapshotTest, ALargerVolumeStoresItsSnapshotsShortLastChunkWhole) {
  auto v = Open("big", "base", 16 * kSnapChunk);
  ASSERT_TRUE(v->Write(12 * kSnapChunk + 5, "past the snapshot", false).ok());
  auto st = Snapshot(v, "grown");
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->chunks, 16u);
  EXPECT_EQ(st->written_chunks, 2u);  // chunk 12, and chunk 7, which grew
  auto clone = Open("clone", "grown");
  EXPECT_EQ(clone->size(), 16 * kSnapChunk);
  EXPECT_EQ(ReadAll(*clone), ReadAll(*v));
}

}  // namespace
}  // namespace ferry::volume
