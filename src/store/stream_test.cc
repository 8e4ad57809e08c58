#include "store/stream.h"

#include <gtest/gtest.h>

#include <cstring>

namespace ferry {
namespace {

TEST(StringSinkTest, LentMemoryHoldsOnlyWhatWasCommitted) {
  StringSink sink;
  ASSERT_TRUE(sink.Write("ab").ok());
  char* at = sink.Lend(6);
  ASSERT_NE(at, nullptr);
  std::memcpy(at, "cdef", 4);
  ASSERT_TRUE(sink.Commit(4).ok());  // the body was cut short after 4 of 6
  EXPECT_EQ(sink.data(), "abcdef");  // not the 2 bytes lent and never filled
  at = sink.Lend(3);                 // a resumed read goes on after them
  std::memcpy(at, "ghi", 3);
  ASSERT_TRUE(sink.Commit(3).ok());
  ASSERT_TRUE(sink.Write("j").ok());
  const StringSink& view = sink;
  EXPECT_EQ(view.data(), "abcdefghij");
}

}  // namespace
}  // namespace ferry
