#include "cache/big_object.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "base/test_temp_dir.h"
#include "codec/zstd_codec.h"
#include "store/local/fs_util.h"

namespace ferry::cache {
namespace {

namespace fs = std::filesystem;
constexpr uint32_t kFrame = 64 << 10;  // small frames keep the test quick

std::string Text(size_t n) {
  std::string s;
  while (s.size() < n) s += "<li>item " + std::to_string(s.size() % 9973) + " of a long listing</li>\n";
  s.resize(n);
  return s;
}

std::string Random(size_t n) {
  std::mt19937_64 rng(42);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

EntryMeta Meta(const std::string& key) {
  EntryMeta m;
  m.key = key;
  m.headers = {{"Content-Type", "text/plain"}};
  return m;
}

std::string ReadFile(const std::string& path) { return *local::ReadSmallFile(path, 1 << 30); }

class BigObjectTest : public ::testing::Test {
 protected:
  // Writes `body` in uneven pieces, as a spool delivers it.
  std::string Write(const std::string& name, const std::string& body, bool compress) {
    std::string path = dir_ / name;
    auto w = BigObjectWriter::Create(path, Meta("http://o/" + name), compress, 3, kFrame);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    for (size_t at = 0; at < body.size(); at += 10'007) {
      EXPECT_TRUE((*w)->Write(std::string_view(body).substr(at, 10'007)).ok());
    }
    EXPECT_TRUE((*w)->Finish(false).ok());
    EXPECT_EQ((*w)->file_size(), fs::file_size(path));
    (*w)->Release();
    return path;
  }

  TestTempDir dir_;
};

TEST_F(BigObjectTest, TextIsStoredAsFramesAndEachFrameDecodesAlone) {
  std::string body = Text(3 * kFrame + kFrame / 2);  // the last frame partial
  std::string path = Write("text", body, true);
  auto big = BigObject::Open(path);
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  const SeekTable& t = (*big)->table();
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ((*big)->meta().key, "http://o/text");
  EXPECT_EQ((*big)->meta().encoding, StoredEncoding::kZstd);
  EXPECT_EQ((*big)->meta().logical_length, body.size());
  EXPECT_EQ(t.frame(3).logical, kFrame / 2);
  EXPECT_LT(t.stored_length() * 4, body.size());  // compressed
  for (size_t i = 0; i < t.size(); ++i) {
    auto f = (*big)->ReadFrame(i);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_EQ(*f, body.substr(t.logical_at(i), t.frame(i).logical)) << i;
  }
  // The stored body is a zstd stream of the whole body (frames one after
  // another), and so is the whole file (skippable frames around them).
  auto stored = (*big)->ReadStored(0, t.stored_length());
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(*codec::ZstdDecompress(*stored), body);
  EXPECT_EQ(*codec::ZstdDecompress(ReadFile(path)), body);
}

TEST_F(BigObjectTest, IncompressibleBodiesAreStoredAsTheyCameWithBlockChecksums) {
  std::string body = Random(2 * kFrame + 1);
  std::string path = Write("bin", body, false);
  auto big = BigObject::Open(path);
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  const SeekTable& t = (*big)->table();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t.frame(2).logical, 1u);
  EXPECT_EQ((*big)->meta().encoding, StoredEncoding::kIdentity);
  EXPECT_EQ(t.stored_length(), body.size());
  EXPECT_EQ(*(*big)->ReadStored(kFrame - 3, 10), body.substr(kFrame - 3, 10));  // a plain read
  size_t table_size = t.Encode().size();
  big->reset();  // `t` is the closed object's: not used past here
  // A flipped bit in the second block: that block fails its check, the
  // others still read.
  std::string file = ReadFile(path);
  size_t body_at = file.size() - body.size() - table_size;
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(body_at + kFrame + 77));
    f.put(static_cast<char>(body[kFrame + 77] ^ 0x04));
  }
  auto damaged = BigObject::Open(path);
  ASSERT_TRUE(damaged.ok());
  EXPECT_EQ((*damaged)->ReadFrame(1).status().code(), ErrorCode::kCorruption);
  EXPECT_EQ(*(*damaged)->ReadFrame(0), body.substr(0, kFrame));
  EXPECT_EQ(*(*damaged)->ReadFrame(2), body.substr(2 * kFrame));
}

TEST_F(BigObjectTest, AnEmptyBodyHasNoFrames) {
  for (bool compress : {true, false}) {
    std::string path = Write(compress ? "empty-z" : "empty", "", compress);
    auto big = BigObject::Open(path);
    ASSERT_TRUE(big.ok()) << big.status().ToString();
    EXPECT_EQ((*big)->table().size(), 0u);
    EXPECT_EQ((*big)->meta().logical_length, 0u);
    EXPECT_EQ(*(*big)->ReadStored(0, 100), "");
  }
}

TEST_F(BigObjectTest, DamagedFilesDoNotOpen) {
  std::string body = Text(2 * kFrame);
  std::string path = Write("d", body, true);
  const std::string good = ReadFile(path);
  auto rewrite = [&](const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  };
  struct Case {
    const char* name;
    std::function<void(std::string*)> damage;
  } cases[] = {
      {"cut short", [](std::string* f) { f->resize(f->size() - 100); }},
      {"cut to the header", [](std::string* f) { f->resize(40); }},
      {"flipped header byte", [](std::string* f) { (*f)[30] ^= 1; }},
      {"flipped table byte", [](std::string* f) { (*f)[f->size() - 12] ^= 1; }},
      {"a byte more", [](std::string* f) { f->push_back(0); }},
      {"empty", [](std::string* f) { f->clear(); }},
  };
  for (const Case& c : cases) {
    std::string f = good;
    c.damage(&f);
    rewrite(f);
    EXPECT_EQ(BigObject::Open(path).status().code(), ErrorCode::kCorruption) << c.name;
  }
  // A flipped byte inside a frame: the file opens, that frame fails.
  std::string f = good;
  f[good.size() / 2] ^= 0x10;
  rewrite(f);
  auto big = BigObject::Open(path);
  ASSERT_TRUE(big.ok());
  bool failed = false;
  for (size_t i = 0; i < (*big)->table().size(); ++i) failed |= !(*big)->ReadFrame(i).ok();
  EXPECT_TRUE(failed);
}

TEST_F(BigObjectTest, AnAbandonedWriterLeavesNothing) {
  std::string path = dir_ / "gone";
  {
    auto w = BigObjectWriter::Create(path, Meta("k"), true, 3, kFrame);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Write(Text(3 * kFrame)).ok());
    EXPECT_TRUE(fs::exists(path));
  }
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace ferry::cache
