#include "volume/chunk_capture.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "base/file_io.h"
#include "base/test_temp_dir.h"

namespace ferry::volume {
namespace {

constexpr uint64_t kCaptureChunk = 4096;

class ChunkCaptureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fd_ = ::open((dir_ / "data").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(fd_, 0);
    // 3 chunks and a short tail: chunk i all 'a' + i.
    for (uint64_t i = 0; i < 4; ++i) {
      std::string bytes(i == 3 ? 100 : kCaptureChunk, static_cast<char>('a' + i));
      ASSERT_TRUE(PwriteFull(fd_, bytes, i * kCaptureChunk, "w").ok());
    }
  }
  void TearDown() override { ::close(fd_); }
  std::unique_ptr<ChunkCapture> Capture(std::vector<bool> frozen) {
    auto c = ChunkCapture::Create(fd_, 3 * kCaptureChunk + 100, kCaptureChunk, std::move(frozen), dir_.path());
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return std::move(c).value();
  }
  void Overwrite(uint64_t i, char c) { ASSERT_TRUE(PwriteFull(fd_, std::string(10, c), i * kCaptureChunk, "w").ok()); }

  TestTempDir dir_;
  int fd_ = -1;
};

TEST_F(ChunkCaptureTest, AWrittenChunkIsCopiedOnceAndTakenWithItsOldBytes) {
  auto c = Capture({false, true, true, true});
  EXPECT_EQ(c->chunks(), (std::vector<uint64_t>{1, 2, 3}));
  ASSERT_TRUE(c->BeforeWrite(1).ok());
  Overwrite(1, 'X');
  ASSERT_TRUE(c->BeforeWrite(1).ok());  // spooled already: the new bytes are not copied
  Overwrite(1, 'Y');
  EXPECT_EQ(c->spooled(), 1u);
  EXPECT_EQ(*c->Take(1), std::string(kCaptureChunk, 'b'));
  EXPECT_EQ(*c->Take(2), std::string(kCaptureChunk, 'c'));  // never written: from the data file
  ASSERT_TRUE(c->BeforeWrite(3).ok());
  EXPECT_EQ(*c->Take(3), std::string(100, 'd'));  // the short tail
  EXPECT_EQ(c->spooled(), 2u);
}

TEST_F(ChunkCaptureTest, ATakenChunkIsWrittenFreelyAndAChunkIsTakenOnce) {
  auto c = Capture({true, false, false, false});
  EXPECT_EQ(*c->Take(0), std::string(kCaptureChunk, 'a'));
  ASSERT_TRUE(c->BeforeWrite(0).ok());
  EXPECT_EQ(c->spooled(), 0u);
  EXPECT_EQ(c->Take(0).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(c->Take(1).status().code(), ErrorCode::kInvalidArgument);  // not frozen
  ASSERT_TRUE(c->BeforeWrite(1).ok());                                   // not frozen: nothing to do
  EXPECT_EQ(c->spooled(), 0u);
}

}  // namespace
}  // namespace ferry::volume
