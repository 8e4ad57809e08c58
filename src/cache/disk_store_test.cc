#include "cache/disk_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "crypto/digest.h"

namespace ferry::cache {
namespace {

namespace fs = std::filesystem;

class DiskStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-cache-store-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<DiskStore> OpenStore(uint64_t max_bytes) {
    DiskStoreOptions o;
    o.dir = dir_;
    o.max_bytes = max_bytes;
    o.sync = false;
    auto s = DiskStore::Open(o);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  static EntryMeta Meta(const std::string& key, size_t n) {
    EntryMeta m;
    m.key = key;
    m.logical_length = n;
    m.headers = {{"Content-Type", "text/plain"}};
    return m;
  }
  std::string FileOf(const std::string& key) {
    std::string h = HexLower(Sha256(key));
    return dir_ + "/entries/" + h.substr(0, 2) + "/" + h;
  }

  std::string dir_;
};

TEST_F(DiskStoreTest, PutGetReplaceRemove) {
  auto s = OpenStore(1 << 20);
  ASSERT_TRUE(s->Put(Meta("k1", 5), "hello").ok());
  auto got = s->Get("k1");
  ASSERT_TRUE(got.ok() && *got);
  EXPECT_EQ((*got)->entry.body, "hello");
  EXPECT_EQ((*got)->entry.meta.key, "k1");
  ASSERT_TRUE(s->Put(Meta("k1", 3), "bye").ok());
  EXPECT_EQ((*s->Get("k1"))->entry.body, "bye");
  EXPECT_EQ(s->stats().entries, 1u);
  EXPECT_EQ(s->stats().bytes, fs::file_size(FileOf("k1")));
  EXPECT_FALSE(*s->Get("absent"));
  ASSERT_TRUE(s->Remove("k1").ok());
  EXPECT_EQ(s->Remove("k1").code(), ErrorCode::kNotFound);
  EXPECT_FALSE(*s->Get("k1"));
  EXPECT_FALSE(fs::exists(FileOf("k1")));
  EXPECT_EQ(s->stats().bytes, 0u);
}

TEST_F(DiskStoreTest, EvictsLeastRecentlyUsedByBytes) {
  std::string body(1000, 'x');
  uint64_t one = EncodeEntry(Meta("a", 1000), body).size();  // keys of one letter: same size
  auto s = OpenStore(3 * one);
  for (const char* k : {"a", "b", "c"}) ASSERT_TRUE(s->Put(Meta(k, 1000), body).ok());
  ASSERT_TRUE(*s->Get("a"));  // a is now the most recent; b the least
  ASSERT_TRUE(s->Put(Meta("d", 1000), body).ok());
  EXPECT_FALSE(*s->Get("b"));
  EXPECT_FALSE(fs::exists(FileOf("b")));
  EXPECT_TRUE(*s->Get("a"));
  EXPECT_TRUE(*s->Get("c"));
  EXPECT_TRUE(*s->Get("d"));
  EXPECT_EQ(s->stats().evictions, 1u);
  EXPECT_LE(s->stats().bytes, 3 * one);
  EXPECT_EQ(s->Put(Meta("huge", 10 * one), std::string(10 * one, 'y')).code(),
            ErrorCode::kInvalidArgument);
}

TEST_F(DiskStoreTest, EntriesSurviveReopeningAndTornWritesAreDropped) {
  {
    auto s = OpenStore(1 << 20);
    ASSERT_TRUE(s->Put(Meta("k1", 3), "one").ok());
    ASSERT_TRUE(s->Put(Meta("k2", 3), "two").ok());
  }
  // A write a crash interrupted: only ever in tmp/.
  std::ofstream(dir_ + "/tmp/deadbeef.123", std::ios::binary) << "FERRY-CACHE-1\npartial";
  auto s = OpenStore(1 << 20);
  EXPECT_EQ(s->stats().entries, 2u);
  EXPECT_EQ((*s->Get("k1"))->entry.body, "one");
  EXPECT_EQ((*s->Get("k2"))->entry.body, "two");
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
  // A smaller limit on reopening evicts down to it.
  s.reset();
  s = OpenStore(fs::file_size(FileOf("k1")));
  EXPECT_EQ(s->stats().entries, 1u);
}

TEST_F(DiskStoreTest, DamagedEntriesAreMissesAndRemoved) {
  auto s = OpenStore(1 << 20);
  ASSERT_TRUE(s->Put(Meta("flip", 100), std::string(100, 'a')).ok());
  ASSERT_TRUE(s->Put(Meta("cut", 100), std::string(100, 'b')).ok());
  ASSERT_TRUE(s->Put(Meta("other", 100), std::string(100, 'c')).ok());
  {
    std::fstream f(FileOf("flip"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(60);
    f.put('Z');
  }
  fs::resize_file(FileOf("cut"), fs::file_size(FileOf("cut")) - 7);
  // Another key's file under this key's name (a rename gone wrong).
  ASSERT_TRUE(s->Put(Meta("flip2", 1), "x").ok());
  fs::copy_file(FileOf("other"), FileOf("flip2"), fs::copy_options::overwrite_existing);
  for (const char* k : {"flip", "cut", "flip2"}) {
    auto got = s->Get(k);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_FALSE(*got) << k << " was served";
    EXPECT_FALSE(fs::exists(FileOf(k))) << k;
  }
  EXPECT_EQ(s->stats().corrupt, 3u);
  EXPECT_EQ((*s->Get("other"))->entry.body, std::string(100, 'c'));
}

TEST_F(DiskStoreTest, AFailedWriteKeepsThePreviousEntry) {
  auto s = OpenStore(1 << 20);
  ASSERT_TRUE(s->Put(Meta("k", 3), "old").ok());
  // Writes cannot start (a file where the temporary directory should be,
  // which stops root too).
  fs::remove_all(dir_ + "/tmp");
  std::ofstream(dir_ + "/tmp") << "in the way";
  Status st = s->Put(Meta("k", 3), "new");
  EXPECT_FALSE(st.ok());
  EXPECT_EQ((*s->Get("k"))->entry.body, "old");
  EXPECT_EQ(s->stats().entries, 1u);
}

}  // namespace
}  // namespace ferry::cache
