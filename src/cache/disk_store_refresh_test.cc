// DiskStore::Refresh: a revalidation writes the entry's new metadata, not
// its body, and that holds across reopening, compaction and crashes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cache/disk_store_test_util.h"
#include "cache/segment_record.h"

namespace ferry::cache {
namespace {

namespace fs = std::filesystem;

class RefreshTest : public DiskStoreTestBase {
 protected:
  std::unique_ptr<DiskStore> OpenStore(uint64_t segment_bytes = 16 << 20) {
    return DiskStoreTestBase::OpenStore(64 << 20, segment_bytes);
  }
  // Version `v` of key's metadata: a body of n bytes, identity.
  static EntryMeta Meta(const std::string& key, size_t n, int v) {
    EntryMeta m;
    m.key = key;
    m.logical_length = n;
    m.stored_length = n;
    m.headers = {{"Content-Type", "text/html"}, {"Date", "v" + std::to_string(v)}};
    m.response_time = 1000 + v;
    return m;
  }
  static std::string Body(char c, size_t n) {
    std::string b(n, c);
    for (size_t i = 0; i < n; i += 7) b[i] = static_cast<char>('a' + i % 26);
    return b;
  }
  // The entry's Date header (its version) and body; "" when none.
  static std::pair<std::string, std::string> Read(DiskStore* s, const std::string& key) {
    auto got = s->Get(key);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    if (!got.ok() || !*got) return {"", ""};
    std::string date;
    for (const auto& [k, v] : (*got)->meta.headers) {
      if (k == "Date") date = v;
    }
    return {date, (*got)->body};
  }
  // A crash before any mark was synced: every record's state byte live again.
  void ReviveEveryRecord() {
    for (const std::string& path : SegmentFiles()) {
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      for (size_t at = kSegmentHeaderSize; at + kRecordHeadSize <= bytes.size();) {
        auto h = ParseRecordHead(std::string_view(bytes).substr(at));
        ASSERT_TRUE(h.ok());
        f.seekp(static_cast<std::streamoff>(at + kRecordStateOffset));
        f.put(kRecordLive);
        at += h->size();
      }
    }
  }
};

TEST_F(RefreshTest, AThousandRefreshesOfA100KBEntryWriteLessThan1MB) {
  auto s = OpenStore();
  const std::string body = Body('x', 100'000);
  ASSERT_TRUE(s->Put(Meta("page", body.size(), 0), body).ok());
  const uint64_t before = s->stats().segment_bytes;
  for (int v = 1; v <= 1000; ++v) ASSERT_TRUE(s->Refresh(Meta("page", body.size(), v)).ok()) << v;
  DiskStoreStats st = s->stats();
  EXPECT_LT(st.segment_bytes - before, 1u << 20) << "the body was written again";
  EXPECT_EQ(st.refreshes, 1000u);
  EXPECT_EQ(st.refresh_bytes, st.segment_bytes - before);
  EXPECT_EQ(st.entries, 1u);
  EXPECT_EQ(Read(s.get(), "page"), std::make_pair(std::string("v1000"), body));
  // Live: the body's record and the last refresh only.
  EXPECT_LT(st.bytes, body.size() + 1000);
  // And after a reopen, from the records themselves.
  s = OpenStore();
  EXPECT_EQ(Read(s.get(), "page"), std::make_pair(std::string("v1000"), body));
  EXPECT_EQ(s->stats().entries, 1u);
  EXPECT_EQ(s->stats().bytes, st.bytes);
}

TEST_F(RefreshTest, OnlyTheSameBodyOfAStoredEntryIsRefreshed) {
  auto s = OpenStore();
  EXPECT_EQ(s->Refresh(Meta("none", 10, 1)).code(), ErrorCode::kNotFound);
  ASSERT_TRUE(s->Put(Meta("a", 500, 0), Body('a', 500)).ok());
  EXPECT_EQ(s->Refresh(Meta("a", 501, 1)).code(),
            ErrorCode::kPreconditionFailed);  // another length
  EntryMeta zstd = Meta("a", 500, 1);
  zstd.encoding = StoredEncoding::kZstd;
  zstd.logical_length = 2000;
  EXPECT_EQ(s->Refresh(zstd).code(), ErrorCode::kPreconditionFailed);  // another coding
  EXPECT_EQ(Read(s.get(), "a").first, "v0");
  EXPECT_EQ(s->stats().refreshes, 0u);
}

TEST_F(RefreshTest, ALaterPutOrARemoveEndsBothRecords) {
  auto s = OpenStore();
  ASSERT_TRUE(s->Put(Meta("a", 3000, 0), Body('1', 3000)).ok());
  ASSERT_TRUE(s->Refresh(Meta("a", 3000, 1)).ok());
  ASSERT_TRUE(s->Put(Meta("a", 2000, 2), Body('2', 2000)).ok());
  EXPECT_EQ(Read(s.get(), "a"), std::make_pair(std::string("v2"), Body('2', 2000)));
  ASSERT_TRUE(s->Put(Meta("b", 3000, 0), Body('b', 3000)).ok());
  ASSERT_TRUE(s->Refresh(Meta("b", 3000, 1)).ok());
  ASSERT_TRUE(s->Remove("b").ok());
  const uint64_t live = s->stats().bytes;
  EXPECT_EQ(live, EncodeRecord(Meta("a", 2000, 2), Body('2', 2000))->size());
  s = OpenStore();
  EXPECT_EQ(Read(s.get(), "a"), std::make_pair(std::string("v2"), Body('2', 2000)));
  EXPECT_EQ(Read(s.get(), "b").first, "");
  EXPECT_EQ(s->stats().bytes, live);
}

TEST_F(RefreshTest, OnOpenARefreshAppliesOnlyToTheBodyItNames) {
  // Marks never synced (a crash): every record is live on disk, and the
  // checksums alone say which refresh goes with which body.
  {
    auto s = OpenStore();
    ASSERT_TRUE(s->Put(Meta("a", 3000, 0), Body('1', 3000)).ok());
    ASSERT_TRUE(s->Refresh(Meta("a", 3000, 1)).ok());
    ASSERT_TRUE(s->Refresh(Meta("a", 3000, 2)).ok());
  }
  ReviveEveryRecord();
  {
    auto s = OpenStore();
    EXPECT_EQ(Read(s.get(), "a"), std::make_pair(std::string("v2"), Body('1', 3000)));
    ASSERT_TRUE(s->Put(Meta("a", 3000, 3), Body('3', 3000)).ok());  // the same length, another body
  }
  ReviveEveryRecord();
  {
    auto s = OpenStore();
    EXPECT_EQ(Read(s.get(), "a"), std::make_pair(std::string("v3"), Body('3', 3000)));
    ASSERT_TRUE(s->Refresh(Meta("a", 3000, 4)).ok());
  }
  ReviveEveryRecord();
  auto s = OpenStore();
  EXPECT_EQ(Read(s.get(), "a"), std::make_pair(std::string("v4"), Body('3', 3000)));
  EXPECT_EQ(s->stats().entries, 1u);
}

TEST_F(RefreshTest, ATornRefreshLeavesTheOneBefore) {
  {
    auto s = OpenStore();
    ASSERT_TRUE(s->Put(Meta("a", 3000, 0), Body('1', 3000)).ok());
    ASSERT_TRUE(s->Refresh(Meta("a", 3000, 1)).ok());
    ASSERT_TRUE(s->Refresh(Meta("a", 3000, 2)).ok());
  }
  // A crash mid-append of the second refresh, after its predecessor was
  // marked: the mark is undone too (it was not synced either).
  ReviveEveryRecord();
  std::string seg = SegmentFiles().back();
  fs::resize_file(seg, fs::file_size(seg) - 10);
  auto s = OpenStore();
  EXPECT_EQ(s->stats().torn, 1u);
  EXPECT_EQ(Read(s.get(), "a"), std::make_pair(std::string("v1"), Body('1', 3000)));
}

TEST_F(RefreshTest, CompactionWritesARefreshedEntryWholeAgain) {
  const uint64_t seg_bytes = 64 << 10;
  auto s = OpenStore(seg_bytes);
  ASSERT_TRUE(s->Put(Meta("kept", 20'000, 0), Body('k', 20'000)).ok());
  for (int i = 0; i < 40; ++i) {  // fillers, then removed: the first segments go sparse
    std::string k = "filler" + std::to_string(i);
    ASSERT_TRUE(s->Put(Meta(k, 4000, 0), Body('f', 4000)).ok());
    if (i == 5) {
      ASSERT_TRUE(s->Refresh(Meta("kept", 20'000, 1)).ok());
    }
  }
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(s->Remove("filler" + std::to_string(i)).ok());
  ASSERT_GT(s->CompactNow(), 0u);
  const auto whole = EncodeRecord(Meta("kept", 20'000, 1), Body('k', 20'000))->size();
  EXPECT_EQ(s->stats().bytes, whole);  // one record: metadata and body together
  EXPECT_EQ(Read(s.get(), "kept"), std::make_pair(std::string("v1"), Body('k', 20'000)));
  s = OpenStore(seg_bytes);
  EXPECT_EQ(Read(s.get(), "kept"), std::make_pair(std::string("v1"), Body('k', 20'000)));
  EXPECT_EQ(s->stats().entries, 1u);
  EXPECT_EQ(s->stats().bytes, whole);
}

}  // namespace
}  // namespace ferry::cache
