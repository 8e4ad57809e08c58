#include "cache/disk_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cache/disk_store_test_util.h"
#include "cache/segment_record.h"
#include "crypto/digest.h"

namespace ferry::cache {
namespace {

namespace fs = std::filesystem;

class DiskStoreTest : public DiskStoreTestBase {
 protected:
  static EntryMeta Meta(const std::string& key, size_t n) {
    EntryMeta m;
    m.key = key;
    m.logical_length = n;
    m.headers = {{"Content-Type", "text/plain"}};
    return m;
  }
  static uint64_t RecordSize(const std::string& key, const std::string& body) {
    return EncodeRecord(Meta(key, body.size()), body)->size();
  }
  static std::string Body(const std::string& key, size_t n) {
    std::string b;
    while (b.size() < n) b += key + ":" + std::to_string(b.size()) + ";";
    b.resize(n);
    return b;
  }
  std::optional<std::string> BodyOf(DiskStore* s, const std::string& key) {
    auto got = s->Get(key);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    if (!got.ok() || !*got) return std::nullopt;
    EXPECT_EQ((*got)->meta.key, key);
    return (*got)->body;
  }
  uint64_t AllocatedOnDisk() {
    uint64_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir_.path())) {
      struct stat st {};
      if (e.is_regular_file() && ::stat(e.path().c_str(), &st) == 0) n += st.st_blocks * 512;
    }
    return n;
  }
};

TEST_F(DiskStoreTest, PutGetReplaceRemove) {
  auto s = OpenStore(1 << 20);
  ASSERT_TRUE(s->Put(Meta("k1", 5), "hello").ok());
  EXPECT_EQ(BodyOf(s.get(), "k1"), "hello");
  ASSERT_TRUE(s->Put(Meta("k1", 3), "bye").ok());
  EXPECT_EQ(BodyOf(s.get(), "k1"), "bye");
  EXPECT_EQ(s->stats().entries, 1u);
  EXPECT_EQ(s->stats().bytes, RecordSize("k1", "bye"));
  EXPECT_EQ(s->stats().logical_bytes, 3u);
  EXPECT_FALSE(BodyOf(s.get(), "absent"));
  ASSERT_TRUE(s->Remove("k1").ok());
  EXPECT_EQ(s->Remove("k1").code(), ErrorCode::kNotFound);
  EXPECT_FALSE(BodyOf(s.get(), "k1"));
  EXPECT_EQ(s->stats().bytes, 0u);
  // Both records are in one segment file, back to back.
  ASSERT_EQ(SegmentFiles().size(), 1u);
  EXPECT_EQ(fs::file_size(SegmentFiles()[0]), kSegmentHeaderSize + RecordSize("k1", "hello") + RecordSize("k1", "bye"));
}

TEST_F(DiskStoreTest, EvictsLeastRecentlyUsedByBytes) {
  std::string body(1000, 'x');
  uint64_t one = RecordSize("a", body);  // keys of one letter: same size
  auto s = OpenStore(3 * one);
  for (const char* k : {"a", "b", "c"}) ASSERT_TRUE(s->Put(Meta(k, 1000), body).ok());
  ASSERT_TRUE(BodyOf(s.get(), "a"));  // a is now the most recent; b the least
  ASSERT_TRUE(s->Put(Meta("d", 1000), body).ok());
  EXPECT_FALSE(BodyOf(s.get(), "b"));
  EXPECT_TRUE(BodyOf(s.get(), "c"));  // c now more recent than a
  ASSERT_TRUE(s->Put(Meta("e", 1000), body).ok());
  EXPECT_FALSE(BodyOf(s.get(), "a"));
  EXPECT_TRUE(BodyOf(s.get(), "c"));
  EXPECT_TRUE(BodyOf(s.get(), "d"));
  EXPECT_TRUE(BodyOf(s.get(), "e"));
  EXPECT_EQ(s->stats().evictions, 2u);
  EXPECT_LE(s->stats().bytes, 3 * one);
  EXPECT_EQ(s->Put(Meta("huge", 10 * one), std::string(10 * one, 'y')).code(), ErrorCode::kInvalidArgument);
}

TEST_F(DiskStoreTest, TheIndexIsRebuiltFromTheSegmentsOnReopen) {
  {
    auto s = OpenStore(1 << 20, 4096);  // several segments
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(s->Put(Meta("k" + std::to_string(i), 700), Body("v1", 700)).ok());
    ASSERT_TRUE(s->Put(Meta("k3", 700), Body("v2", 700)).ok());  // replaced
    ASSERT_TRUE(s->Remove("k4").ok());                            // purged
    ASSERT_GT(SegmentFiles().size(), 2u);
  }
  auto s = OpenStore(1 << 20, 4096);
  EXPECT_EQ(s->stats().entries, 19u);
  EXPECT_EQ(BodyOf(s.get(), "k3"), Body("v2", 700));  // the later record wins
  EXPECT_FALSE(BodyOf(s.get(), "k4"));                 // a purge stays purged
  for (int i : {0, 5, 19}) EXPECT_EQ(BodyOf(s.get(), "k" + std::to_string(i)), Body("v1", 700));
  EXPECT_EQ(s->stats().torn, 0u);
  EXPECT_EQ(s->stats().corrupt, 0u);
  // Appends go on after the newest segment.
  ASSERT_TRUE(s->Put(Meta("new", 10), Body("n", 10)).ok());
  s.reset();
  s = OpenStore(1 << 20, 4096);
  EXPECT_EQ(BodyOf(s.get(), "new"), Body("n", 10));
  EXPECT_EQ(s->stats().entries, 20u);
  // A smaller limit on reopening evicts down to it.
  s.reset();
  s = OpenStore(5 * RecordSize("k10", Body("v1", 700)), 4096);
  EXPECT_EQ(s->stats().entries, 5u);
}

TEST_F(DiskStoreTest, PutsWithoutASyncAreDurableAfterSyncAppends) {
  DiskStoreOptions o;
  o.dir = dir_.path();
  o.segment_bytes = 4096;  // the batch crosses a seal (that segment is synced as it is sealed)
  o.background_compaction = false;
  {
    auto s = std::move(DiskStore::Open(o)).value();
    EXPECT_TRUE(s->SyncAppends().ok());  // nothing appended yet
    for (int i = 0; i < 12; ++i) ASSERT_TRUE(s->Put(Meta("k" + std::to_string(i), 900), Body("b", 900), false).ok());
    EXPECT_EQ(s->stats().entries, 12u);  // indexed at once, durable at the sync
    ASSERT_TRUE(s->SyncAppends().ok());
  }
  auto s = std::move(DiskStore::Open(o)).value();
  EXPECT_EQ(s->stats().entries, 12u);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(BodyOf(s.get(), "k" + std::to_string(i)), Body("b", 900));
}

TEST_F(DiskStoreTest, ATornTailIsCutOffCountedAndNeverServed) {
  {
    auto s = OpenStore(1 << 20);
    for (const char* k : {"a", "b", "c"}) ASSERT_TRUE(s->Put(Meta(k, 3000), Body(k, 3000)).ok());
  }
  // A crash mid-append: the last record cut short.
  std::string seg = SegmentFiles().back();
  uint64_t whole = fs::file_size(seg);
  fs::resize_file(seg, whole - 1200);
  auto s = OpenStore(1 << 20);
  EXPECT_EQ(s->stats().torn, 1u);
  EXPECT_EQ(s->stats().torn_bytes, RecordSize("c", Body("c", 3000)) - 1200);
  EXPECT_EQ(s->stats().entries, 2u);
  EXPECT_FALSE(BodyOf(s.get(), "c"));
  EXPECT_EQ(BodyOf(s.get(), "a"), Body("a", 3000));
  EXPECT_EQ(BodyOf(s.get(), "b"), Body("b", 3000));
  EXPECT_EQ(fs::file_size(seg), whole - RecordSize("c", Body("c", 3000)));  // cut off
  // New appends never follow garbage, and survive the next reopen.
  ASSERT_TRUE(s->Put(Meta("d", 10), Body("d", 10)).ok());
  s.reset();
  s = OpenStore(1 << 20);
  EXPECT_EQ(s->stats().torn, 0u);
  EXPECT_EQ(BodyOf(s.get(), "d"), Body("d", 10));
  EXPECT_EQ(s->stats().entries, 3u);
}

TEST_F(DiskStoreTest, DamagedRecordsAreMissesCountedAndDropped) {
  auto s = OpenStore(1 << 20);
  for (const char* k : {"flip", "other", "zeros"}) ASSERT_TRUE(s->Put(Meta(k, 2000), Body(k, 2000)).ok());
  std::string seg = SegmentFiles()[0];
  uint64_t flip_at = kSegmentHeaderSize;
  uint64_t zeros_at = flip_at + RecordSize("flip", Body("flip", 2000)) + RecordSize("other", Body("other", 2000));
  {
    std::fstream f(seg, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(flip_at + 1000));
    f.put('#');  // one byte of the body
    f.seekp(static_cast<std::streamoff>(zeros_at + 200));
    f.write(std::string(500, '\0').data(), 500);
  }
  EXPECT_FALSE(BodyOf(s.get(), "flip"));
  EXPECT_FALSE(BodyOf(s.get(), "zeros"));
  EXPECT_EQ(s->stats().corrupt, 2u);
  EXPECT_EQ(s->stats().entries, 1u);
  EXPECT_EQ(BodyOf(s.get(), "other"), Body("other", 2000));
  // Dropped for good: killed on disk, so not found again on reopen.
  s.reset();
  s = OpenStore(1 << 20);
  EXPECT_EQ(s->stats().entries, 1u);
  EXPECT_FALSE(BodyOf(s.get(), "flip"));
}

TEST_F(DiskStoreTest, CompactionKeepsEveryLiveEntryAndFreesTheRest) {
  const uint64_t seg_bytes = 64 << 10;
  auto s = OpenStore(64 << 20, seg_bytes);
  std::map<std::string, std::string> kept;
  for (int i = 0; i < 400; ++i) {  // about 25 segments
    std::string k = "key" + std::to_string(i);
    ASSERT_TRUE(s->Put(Meta(k, 4000), Body(k, 4000)).ok());
    kept[k] = Body(k, 4000);
  }
  // Two of every three removed: segments a third live.
  for (int i = 0; i < 400; ++i) {
    if (i % 3 == 0) continue;
    std::string k = "key" + std::to_string(i);
    ASSERT_TRUE(s->Remove(k).ok());
    kept.erase(k);
  }
  uint64_t before = s->stats().allocated_bytes;
  uint64_t segments_before = s->stats().segments;
  EXPECT_EQ(before, AllocatedOnDisk());
  size_t compacted = s->CompactNow();
  DiskStoreStats st = s->stats();
  EXPECT_GE(compacted, segments_before - 2) << "all sealed segments but those copied into";
  EXPECT_EQ(st.compactions, compacted);
  EXPECT_EQ(st.entries, kept.size());
  EXPECT_LT(st.allocated_bytes * 2, before) << st.allocated_bytes << " of " << before;
  EXPECT_EQ(st.allocated_bytes, AllocatedOnDisk());
  EXPECT_LT(st.segment_bytes, st.bytes + 2 * seg_bytes);
  for (const auto& [k, v] : kept) EXPECT_EQ(BodyOf(s.get(), k), v) << k;
  // And still after a reopen, from the compacted segments.
  s.reset();
  s = OpenStore(64 << 20, seg_bytes);
  EXPECT_EQ(s->stats().entries, kept.size());
  for (const auto& [k, v] : kept) EXPECT_EQ(BodyOf(s.get(), k), v) << k;
}

TEST_F(DiskStoreTest, EvictionFreesWholeSegmentsAndKeepsLruOrder) {
  const uint64_t seg_bytes = 32 << 10;
  uint64_t one = RecordSize("key000", Body("key000", 3000));
  auto s = OpenStore(40 * one, seg_bytes);
  for (int i = 0; i < 200; ++i) {
    char k[16];
    std::snprintf(k, sizeof(k), "key%03d", i);
    ASSERT_TRUE(s->Put(Meta(k, 3000), Body(k, 3000)).ok());
    if (i >= 10) {
      ASSERT_TRUE(BodyOf(s.get(), "key005"));  // kept in use throughout
    }
  }
  s->CompactNow();
  DiskStoreStats st = s->stats();
  EXPECT_EQ(st.entries, 40u);
  EXPECT_TRUE(BodyOf(s.get(), "key005"));
  EXPECT_TRUE(BodyOf(s.get(), "key199"));
  EXPECT_FALSE(BodyOf(s.get(), "key150"));
  // Segments that emptied went; the disk holds about the live bytes.
  EXPECT_LT(st.segment_bytes, 2 * st.bytes + seg_bytes);
  EXPECT_LE(st.allocated_bytes, AllocatedOnDisk());
}

TEST_F(DiskStoreTest, BigObjectsAreFilesOfTheirOwnInTheSameIndex) {
  auto s = OpenStore(1 << 30);
  std::string body = Body("big", 3 << 20);
  {
    auto w = s->BeginBig(Meta("big", 0), true, 3);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE((*w)->Write(body).ok());
    ASSERT_TRUE(s->CommitBig(std::move(w).value()).ok());
  }
  ASSERT_TRUE(s->Put(Meta("small", 5), "small").ok());
  auto got = s->Get("big");
  ASSERT_TRUE(got.ok() && *got);
  ASSERT_NE((*got)->big, nullptr);
  EXPECT_EQ((*got)->meta.logical_length, body.size());
  EXPECT_EQ(*(*got)->big->ReadFrame(1), body.substr(1 << 20, 1 << 20));
  DiskStoreStats st = s->stats();
  EXPECT_EQ(st.big_entries, 1u);
  EXPECT_EQ(st.logical_bytes, body.size() + 5);
  EXPECT_EQ(st.allocated_bytes, AllocatedOnDisk());
  EXPECT_TRUE(fs::is_empty(dir_ / "tmp"));
  // Found again on reopen; replaced by a small entry, its file goes.
  s.reset();
  s = OpenStore(1 << 30);
  EXPECT_EQ(s->stats().big_entries, 1u);
  ASSERT_NE((*s->Get("big"))->big, nullptr);
  ASSERT_TRUE(s->Put(Meta("big", 3), "now").ok());
  EXPECT_EQ(BodyOf(s.get(), "big"), "now");
  EXPECT_EQ(s->stats().big_entries, 0u);
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir_ / "big")) files += e.is_regular_file();
  EXPECT_EQ(files, 0u);
}

TEST_F(DiskStoreTest, ABigObjectLargerThanTheCacheIsNotKept) {
  auto s = OpenStore(100 << 10);
  auto w = s->BeginBig(Meta("big", 0), false, 3);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Write(Body("x", 200 << 10)).ok());
  EXPECT_EQ(s->CommitBig(std::move(w).value()).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(s->stats().entries, 0u);
  EXPECT_TRUE(fs::is_empty(dir_ / "tmp"));
}

TEST_F(DiskStoreTest, TheOldLayoutIsMovedIntoSegments) {
  // Two entries as the previous store wrote them, and a damaged one.
  for (const char* k : {"old1", "old2", "bad"}) {
    std::string h = HexLower(Sha256(k));
    fs::create_directories(dir_ / ("entries/" + h.substr(0, 2)));
    std::string file = EncodeEntry(Meta(k, 4), std::string(k).substr(0, 3) + "!");
    if (std::string(k) == "bad") file[20] ^= 1;
    std::ofstream(dir_ / ("entries/" + h.substr(0, 2) + "/" + h), std::ios::binary) << file;
  }
  auto s = OpenStore(1 << 20);
  EXPECT_EQ(s->stats().entries, 2u);
  EXPECT_EQ(BodyOf(s.get(), "old1"), "old!");
  EXPECT_EQ(BodyOf(s.get(), "old2"), "old!");
  EXPECT_FALSE(BodyOf(s.get(), "bad"));
  EXPECT_FALSE(fs::exists(dir_ / "entries"));
  s.reset();
  s = OpenStore(1 << 20);
  EXPECT_EQ(BodyOf(s.get(), "old1"), "old!");
}

TEST_F(DiskStoreTest, AFailedWriteKeepsThePreviousEntry) {
  auto s = OpenStore(1 << 20, 10);  // every record seals its segment
  ASSERT_TRUE(s->Put(Meta("k", 3), "old").ok());
  // The next segment cannot be made (a file where the directory was,
  // which stops root too); the sealed one stays open.
  fs::rename(dir_ / "segments", dir_ / "moved");
  std::ofstream(dir_ / "segments") << "in the way";
  Status st = s->Put(Meta("k", 3), "new");
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(BodyOf(s.get(), "k"), "old");
  EXPECT_EQ(s->stats().entries, 1u);
}

}  // namespace
}  // namespace ferry::cache
