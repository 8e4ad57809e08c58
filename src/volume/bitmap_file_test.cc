#include "volume/bitmap_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "base/test_temp_dir.h"

namespace ferry::volume {
namespace {

auto None = [](uint64_t) { return false; };

TEST(BitmapFileTest, BitsSetSurviveAReopenAndAreShownOnlyOnceDurable) {
  TestTempDir dir;
  const std::string path = dir / "bits";
  std::vector<uint64_t> shown;
  int before = 0;
  {
    bool created = false;
    BitmapHooks hooks{[&] {
                        ++before;
                        EXPECT_TRUE(shown.empty() || shown.size() == 2);  // hook first, then show
                        return Status::Ok();
                      },
                      [&](const std::vector<uint64_t>& g) { shown.insert(shown.end(), g.begin(), g.end()); }};
    auto f = BitmapFile::Open(path, "FERRYT01", 20, [](uint64_t i) { return i == 19; }, hooks, &created);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_TRUE(created);
    EXPECT_TRUE((*f)->loaded()[19]);
    ASSERT_TRUE((*f)->Set({3, 9}).ok());
    ASSERT_TRUE((*f)->Set({}).ok());  // nothing: no commit
    EXPECT_EQ((*f)->commits(), 1u);
    EXPECT_EQ(shown, (std::vector<uint64_t>{3, 9}));
    EXPECT_EQ(before, 1);
  }
  bool created = true;
  auto f = BitmapFile::Open(path, "FERRYT01", 20, None, {}, &created);
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(created);
  std::vector<bool> want(20);
  want[3] = want[9] = want[19] = true;
  EXPECT_EQ((*f)->loaded(), want);
}

TEST(BitmapFileTest, ConcurrentSettersShareCommitsAndNoBitIsLost) {
  TestTempDir dir;
  std::atomic<int> commits{0};
  BitmapHooks hooks{[&] {
                      ++commits;
                      return Status::Ok();
                    },
                    nullptr};
  {
    auto f = BitmapFile::Open(dir / "bits", "FERRYT01", 400, None, hooks);
    ASSERT_TRUE(f.ok());
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        for (uint64_t i = static_cast<uint64_t>(t); i < 400; i += 8) EXPECT_TRUE((*f)->Set({i}).ok());
      });
    }
    for (auto& t : threads) t.join();
    // The file counts the groups it wrote: one per before_write hook.
    EXPECT_EQ((*f)->commits(), static_cast<uint64_t>(commits.load()));
  }
  EXPECT_LE(commits.load(), 400);
  auto f = BitmapFile::Open(dir / "bits", "FERRYT01", 400, None, {});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)->loaded(), std::vector<bool>(400, true));
}

TEST(BitmapFileTest, AFailedGroupSetsNothing) {
  TestTempDir dir;
  bool fail = true;
  BitmapHooks hooks{[&] { return fail ? Status::IoError("disk") : Status::Ok(); }, nullptr};
  {
    auto f = BitmapFile::Open(dir / "bits", "FERRYT01", 10, None, hooks);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ((*f)->Set({4}).code(), ErrorCode::kIoError);
    fail = false;
    EXPECT_TRUE((*f)->Set({5}).ok());
  }
  auto f = BitmapFile::Open(dir / "bits", "FERRYT01", 10, None, {});
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE((*f)->loaded()[4]);
  EXPECT_TRUE((*f)->loaded()[5]);
}

TEST(BitmapFileTest, AnotherKindOrShapeIsRefused) {
  TestTempDir dir;
  ASSERT_TRUE(BitmapFile::Open(dir / "bits", "FERRYT01", 10, None, {}).ok());
  EXPECT_EQ(BitmapFile::Open(dir / "bits", "FERRYT02", 10, None, {}).status().code(), ErrorCode::kCorruption);
  EXPECT_EQ(BitmapFile::Open(dir / "bits", "FERRYT01", 11, None, {}).status().code(), ErrorCode::kCorruption);
  std::ofstream(dir / "bits", std::ios::trunc) << "FERRYT01short";
  EXPECT_EQ(BitmapFile::Open(dir / "bits", "FERRYT01", 10, None, {}).status().code(), ErrorCode::kCorruption);
}

}  // namespace
}  // namespace ferry::volume
