#include "gateway/arrival.h"

#include <gtest/gtest.h>

#include <thread>

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
  auto whole = a->Reader(0, 10);
  auto middle = a->Reader(4, 3);
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
  auto late = a->Reader(8, 2);
  EXPECT_EQ(*ReadAll(*late), "89");
}

TEST(ArrivalTest, AFailureAfterTheStartReachesReadersAndLaterClients) {
  auto a = std::make_shared<Arrival>(1024);
  ASSERT_TRUE(a->Start(InfoOf(10)).ok());
  auto reader = a->Reader(0, 10);
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
  EXPECT_EQ(*ReadAll(*a->Reader(0, 5)), "hello");
}

TEST(ArrivalTest, AnEmptyBodyEndsAtOnce) {
  auto a = std::make_shared<Arrival>(1024);
  ASSERT_TRUE(a->Start(InfoOf(0)).ok());
  a->End(InfoOf(0));
  EXPECT_EQ(*ReadAll(*a->Reader(0, 0)), "");
  EXPECT_EQ(a->WaitEnd()->size, 0u);
}

}  // namespace
}  // namespace ferry::gateway
