#include "gateway/arrival.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <utility>

namespace ferry::gateway {
namespace {

ObjectInfo InfoOf(uint64_t size) {
  ObjectInfo info;
  info.key = "k";
  info.size = size;
  info.etag = "e";
  return info;
}

// Reads `reader` to its end (or its error).
Result<std::string> ReadAll(http::BodyReader& reader) {
  std::string out;
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(std::string piece, reader.Read(3));
    if (piece.empty()) return out;
    out += piece;
  }
}

TEST(ArrivalTest, ReadersTakeBytesAsTheyArriveEachFromItsOwnRange) {
  auto a = std::make_shared<Arrival>(1024);
  ASSERT_TRUE(a->Start(InfoOf(10)).ok());
  auto info = a->WaitInfo();  // known before any byte
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->size, 10u);
  auto whole = a->Reader(0, 10, nullptr);
  auto middle = a->Reader(4, 3, nullptr);
  ASSERT_TRUE(a->Write("0123").ok());
  // The first bytes are readable at once, while the rest is still coming.
  auto first = whole->Read(100);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, "0123");
  std::thread fetch([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(a->Write("456").ok());
    ASSERT_TRUE(a->Write("789").ok());
    a->End(InfoOf(10));
  });
  auto rest = ReadAll(*whole);
  auto mid = ReadAll(*middle);
  fetch.join();
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(*rest, "456789");
  ASSERT_TRUE(mid.ok());
  EXPECT_EQ(*mid, "456");
  ASSERT_TRUE(a->WaitEnd().ok());
  EXPECT_EQ(*a->Body(), "0123456789");
  // A reader that comes after the end reads from memory.
  auto late = a->Reader(8, 2, nullptr);
  EXPECT_EQ(*ReadAll(*late), "89");
}

TEST(ArrivalTest, AFailureAfterTheStartReachesReadersAndLaterClients) {
  auto a = std::make_shared<Arrival>(1024);
  ASSERT_TRUE(a->Start(InfoOf(10)).ok());
  auto reader = a->Reader(0, 10, nullptr);
  ASSERT_TRUE(a->Write("abc").ok());
  a->End(Status(ErrorCode::kNetwork, "reset by peer"));
  auto all = ReadAll(*reader);
  ASSERT_FALSE(all.ok());  // never a short body taken as whole
  EXPECT_EQ(all.status().code(), ErrorCode::kNetwork);
  EXPECT_EQ(a->WaitInfo().status().code(), ErrorCode::kNetwork);  // no new answer starts
  EXPECT_FALSE(a->WaitEnd().ok());
  EXPECT_FALSE(a->large());
}

TEST(ArrivalTest, ABodyOverTheCapIsLargeWhetherAnnouncedOrGrown) {
  auto announced = std::make_shared<Arrival>(8);
  Status st = announced->Start(InfoOf(9));
  EXPECT_EQ(st.code(), ErrorCode::kCancelled);
  announced->End(st);
  EXPECT_TRUE(announced->large());
  EXPECT_EQ(announced->WaitInfo().status().code(), ErrorCode::kCancelled);

  auto grown = std::make_shared<Arrival>(8);  // a store that gives no Start
  ASSERT_TRUE(grown->Write("12345").ok());
  st = grown->Write("6789");
  EXPECT_EQ(st.code(), ErrorCode::kCancelled);
  grown->End(Status(ErrorCode::kNetwork, "the store's wrapping of the sink's error"));
  EXPECT_TRUE(grown->large());
  EXPECT_EQ(grown->WaitEnd().status().code(), ErrorCode::kCancelled);
}

TEST(ArrivalTest, WithoutStartTheInfoComesAtTheEndWithTheSizeThatArrived) {
  auto a = std::make_shared<Arrival>(1024);
  std::thread fetch([&] {
    ASSERT_TRUE(a->Write("hello").ok());
    ObjectInfo end = InfoOf(0);
    end.etag = "md5-at-the-end";
    a->End(end);
  });
  auto info = a->WaitInfo();
  fetch.join();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->etag, "md5-at-the-end");
  EXPECT_EQ(info->size, 5u);
  EXPECT_EQ(*ReadAll(*a->Reader(0, 5, nullptr)), "hello");
}

TEST(ArrivalTest, AnEmptyBodyEndsAtOnce) {
  auto a = std::make_shared<Arrival>(1024);
  ASSERT_TRUE(a->Start(InfoOf(0)).ok());
  a->End(InfoOf(0));
  EXPECT_EQ(*ReadAll(*a->Reader(0, 0, nullptr)), "");
  EXPECT_EQ(a->WaitEnd()->size, 0u);
}

// A body already whole, as the destination would give it.
class FixedReader : public http::BodyReader {
 public:
  explicit FixedReader(std::string s) : s_(std::move(s)) {}
  Result<std::string> Read(size_t) override { return std::exchange(s_, std::string()); }
  void Cancel() override {}

 private:
  std::string s_;
};

TEST(ArrivalTest, AWindowHoldsOnlyWhatItsReadersStillNeed) {
  auto a = std::make_shared<Arrival>(4);
  EXPECT_EQ(a->Start(InfoOf(12)).code(), ErrorCode::kCancelled);
  ASSERT_TRUE(a->large());
  ASSERT_TRUE(a->announced().has_value());
  a->BeginWindow(*a->announced(), 4);
  ASSERT_TRUE(a->windowed());
  ASSERT_EQ(a->WaitInfo()->size, 12u);
  auto reader = a->Reader(0, 12, nullptr);
  a->WaitRoom(4);  // nothing held yet
  ASSERT_TRUE(a->Write("abcd").ok());
  std::atomic<bool> room{false};
  std::thread copier([&] {
    a->WaitRoom(4);  // until the reader has taken "abcd"
    room = true;
    ASSERT_TRUE(a->Write("efgh").ok());
    a->WaitRoom(4);
    ASSERT_TRUE(a->Write("ijkl").ok());
    a->End(InfoOf(12));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(room) << "the window took more while its reader had not read";
  auto all = ReadAll(*reader);
  copier.join();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, "abcdefghijkl");
  EXPECT_EQ(a->Body(), nullptr);  // never whole in memory
  // A client that comes now starts behind the window: it reads where the
  // copy landed.
  uint64_t asked_first = 99, asked_last = 99;
  auto late = a->Reader(2, 5, [&](uint64_t first, uint64_t last) {
    asked_first = first;
    asked_last = last;
    return std::make_shared<FixedReader>("cdefg");
  });
  EXPECT_EQ(*ReadAll(*late), "cdefg");
  EXPECT_EQ(asked_first, 2u);
  EXPECT_EQ(asked_last, 6u);
}

TEST(ArrivalTest, AReaderThatGoesAwayNoLongerHoldsTheWindow) {
  auto a = std::make_shared<Arrival>(4);
  (void)a->Start(InfoOf(8));
  a->BeginWindow(*a->announced(), 4);
  auto reader = a->Reader(0, 8, nullptr);
  ASSERT_TRUE(a->Write("abcd").ok());
  std::thread client([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    reader->Cancel();  // the server gave up on this client
  });
  a->WaitRoom(4);  // returns once the reader is gone
  client.join();
  ASSERT_TRUE(a->Write("efgh").ok());
  a->End(InfoOf(8));
  EXPECT_EQ(a->WaitEnd()->size, 8u);
}

}  // namespace
}  // namespace ferry::gateway
