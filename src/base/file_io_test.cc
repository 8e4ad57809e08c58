#include "base/file_io.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace ferry {
namespace {

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-file-io-test.XXXXXX";
    fd_ = ::mkstemp(tmpl);
    ASSERT_GE(fd_, 0);
    path_ = tmpl;
    ASSERT_TRUE(PwriteFull(fd_, "0123456789", 0, "write").ok());
  }
  void TearDown() override {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  int fd_ = -1;
  std::string path_;
};

TEST_F(FileIoTest, PreadUpToStopsAtTheFilesEnd) {
  std::string buf(8, 'x');
  auto got = PreadUpTo(fd_, buf.data(), buf.size(), 6, "read");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, 4u);
  EXPECT_EQ(buf, "6789xxxx");  // nothing written past what was read
  got = PreadUpTo(fd_, buf.data(), 3, 2, "read");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 3u);
  EXPECT_EQ(buf.substr(0, 3), "234");
  got = PreadUpTo(fd_, buf.data(), 4, 100, "read");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 0u);
}

TEST_F(FileIoTest, PreadOrZerosFillsPastTheEndWithZeros) {
  std::string buf(8, 'x');
  ASSERT_TRUE(PreadOrZeros(fd_, buf.data(), buf.size(), 6, "read").ok());
  EXPECT_EQ(buf, std::string("6789") + std::string(4, '\0'));
}

TEST_F(FileIoTest, AReadErrorNamesTheOperation) {
  std::string buf(4, 'x');
  auto got = PreadUpTo(-1, buf.data(), buf.size(), 0, "read the thing");
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().ToString().find("read the thing"), std::string::npos)
      << got.status().ToString();
}

}  // namespace
}  // namespace ferry
