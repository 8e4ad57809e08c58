#include "cache/spool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace ferry::cache {
namespace {

using namespace std::chrono_literals;

std::string ReadAll(http::BodyReader* r) {
  std::string got;
  for (;;) {
    auto piece = r->Read(1000);  // waits for the writer
    EXPECT_TRUE(piece.ok()) << piece.status().ToString();
    if (!piece.ok() || piece->empty()) return got;
    got += *piece;
  }
}

TEST(SpoolTest, EachReaderFollowsTheWriterFromTheStartToTheEnd) {
  auto spool = Spool::Create("/tmp");
  ASSERT_TRUE(spool.ok()) << spool.status().ToString();
  std::shared_ptr<Spool> s = *spool;
  std::string want;
  for (int i = 0; i < 1000; ++i) want += "piece " + std::to_string(i) + "\n";
  auto first = s->NewReader();
  std::thread writer([&] {
    for (size_t at = 0; at < want.size(); at += 777) {
      ASSERT_TRUE(s->Write(std::string_view(want).substr(at, 777)).ok());
      if (at % 7 == 0) std::this_thread::sleep_for(1ms);
    }
    s->Finish(Status::Ok());
  });
  std::string got_late;
  std::thread late([&] {
    std::this_thread::sleep_for(5ms);  // joins midway, still reads from the first byte
    auto r = s->NewReader();
    got_late = ReadAll(r.get());
  });
  std::string got = ReadAll(first.get());
  writer.join();
  late.join();
  EXPECT_EQ(got, want);
  EXPECT_EQ(got_late, want);
  EXPECT_EQ(s->written(), want.size());
}

TEST(SpoolTest, AWriterErrorReachesTheReaderAfterTheBytesBeforeIt) {
  std::shared_ptr<Spool> s = *Spool::Create("/tmp");
  auto r = s->NewReader();
  ASSERT_TRUE(s->Write("partial").ok());
  s->Finish(Status(ErrorCode::kCorruption, "body cut short"));
  auto first = r->Read(100);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, "partial");
  auto second = r->Read(100);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), ErrorCode::kCorruption);
}

TEST(SpoolTest, TheWriterStopsOnlyWhenEveryReaderHasLeft) {
  std::shared_ptr<Spool> s = *Spool::Create("/tmp");
  auto client = s->NewReader();
  auto cache = s->NewReader();
  ASSERT_TRUE(s->Write("abc").ok());
  client->Cancel();
  EXPECT_TRUE(s->Write("def").ok());  // the other reader still wants it
  cache.reset();                       // gone before the end: left too
  EXPECT_EQ(s->Write("ghi").code(), ErrorCode::kCancelled);
}

TEST(SpoolTest, ANonClientReaderThatGivesUpFirstDoesNotCutOffTheClient) {
  std::shared_ptr<Spool> s = *Spool::Create("/tmp");
  auto disk = s->NewReader(/*client=*/false);
  ASSERT_TRUE(s->Write("abc").ok());
  disk->Cancel();  // before the client's reader is made
  EXPECT_TRUE(s->Write("def").ok());
  auto client = s->NewReader();
  s->Finish(Status::Ok());
  EXPECT_EQ(ReadAll(client.get()), "abcdef");
}

TEST(SpoolTest, AHeadThatReadsNothingAbandonsTheSpool) {
  std::shared_ptr<Spool> s = *Spool::Create("/tmp");
  ASSERT_TRUE(s->Write("abc").ok());
  auto reading = s->NewReader();
  s->AbandonIfUnread();
  EXPECT_TRUE(s->Write("def").ok());  // someone is reading
  reading->Cancel();
  EXPECT_EQ(s->Write("ghi").code(), ErrorCode::kCancelled);
  std::shared_ptr<Spool> unread = *Spool::Create("/tmp");
  unread->AbandonIfUnread();
  EXPECT_EQ(unread->Write("x").code(), ErrorCode::kCancelled);
}

TEST(SpoolTest, ADirectoryThatCannotHoldFilesIsAnError) {
  auto s = Spool::Create("/nonexistent/dir");
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace ferry::cache
