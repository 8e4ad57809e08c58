#include "base/atomic_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ferry {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-atomic-file-test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  size_t Entries() { return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), {})); }
  std::string dir_;
};

TEST_F(AtomicFileTest, WritesAndReplacesWholeLeavingNoTemporaryFile) {
  std::string path = dir_ + "/state.json";
  ASSERT_TRUE(WriteFileAtomic(path, "first\n").ok());
  EXPECT_EQ(Read(path), "first\n");
  ASSERT_TRUE(WriteFileAtomic(path, "second, longer\n", {.sync = false, .temp_dir = {}}).ok());
  EXPECT_EQ(Read(path), "second, longer\n");
  EXPECT_EQ(Entries(), 1u);
}

TEST_F(AtomicFileTest, AFailedRenameKeepsTheOldFileAndRemovesTheTemporary) {
  // The target is a non-empty directory: rename(2) refuses to replace it.
  std::string path = dir_ + "/taken";
  fs::create_directories(path + "/inside");
  Status st = WriteFileAtomic(path, "data");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("rename to " + path), std::string::npos) << st.ToString();
  EXPECT_TRUE(fs::is_directory(path + "/inside"));
  EXPECT_EQ(Entries(), 1u);
}

TEST_F(AtomicFileTest, AMissingDirectoryIsAnErrorNamingTheTemporaryFile) {
  Status st = WriteFileAtomic(dir_ + "/no/such/file", "data");
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kNotFound) << st.ToString();
  EXPECT_NE(st.message().find(dir_ + "/no/such/.%tmp."), std::string::npos) << st.ToString();
}

TEST_F(AtomicFileTest, TheTemporaryFileCanLiveInAnotherDirectoryOfTheSameFileSystem) {
  fs::create_directories(dir_ + "/tmp");
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/entry", "body", {.sync = true, .temp_dir = dir_ + "/tmp"}).ok());
  EXPECT_EQ(Read(dir_ + "/entry"), "body");
  EXPECT_TRUE(fs::is_empty(dir_ + "/tmp"));
}

}  // namespace
}  // namespace ferry
