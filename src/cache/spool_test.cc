#include "cache/spool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace ferry::cache {
namespace {

using namespace std::chrono_literals;

TEST(SpoolTest, TheReaderFollowsTheWriterToTheEnd) {
  auto spool = Spool::Create("/tmp");
  ASSERT_TRUE(spool.ok()) << spool.status().ToString();
  std::shared_ptr<Spool> s = *spool;
  std::string want;
  for (int i = 0; i < 1000; ++i) want += "piece " + std::to_string(i) + "\n";
  std::thread writer([&] {
    for (size_t at = 0; at < want.size(); at += 777) {
      ASSERT_TRUE(s->Write(std::string_view(want).substr(at, 777)).ok());
      if (at % 7 == 0) std::this_thread::sleep_for(1ms);
    }
    s->Finish(Status::Ok());
  });
  std::string got;
  for (;;) {
    auto piece = s->Read(1000);  // waits for the writer
    ASSERT_TRUE(piece.ok());
    if (piece->empty()) break;
    got += *piece;
  }
  writer.join();
  EXPECT_EQ(got, want);
  EXPECT_EQ(s->written(), want.size());
}

TEST(SpoolTest, AWriterErrorReachesTheReaderAfterTheBytesBeforeIt) {
  std::shared_ptr<Spool> s = *Spool::Create("/tmp");
  ASSERT_TRUE(s->Write("partial").ok());
  s->Finish(Status(ErrorCode::kCorruption, "body cut short"));
  auto first = s->Read(100);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, "partial");
  auto second = s->Read(100);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), ErrorCode::kCorruption);
}

TEST(SpoolTest, ACancelledReaderStopsTheWriter) {
  std::shared_ptr<Spool> s = *Spool::Create("/tmp");
  ASSERT_TRUE(s->Write("abc").ok());
  s->Cancel();
  Status st = s->Write("def");
  EXPECT_EQ(st.code(), ErrorCode::kCancelled);
}

TEST(SpoolTest, ADirectoryThatCannotHoldFilesIsAnError) {
  auto s = Spool::Create("/nonexistent/dir");
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace ferry::cache
