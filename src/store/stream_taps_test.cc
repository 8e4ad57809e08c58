#include "store/stream_taps.h"

#include <gtest/gtest.h>

#include <cstring>

namespace ferry {
namespace {

// Accepts `room` bytes, then refuses.
class SmallSink : public ByteSink {
 public:
  explicit SmallSink(size_t room) : room_(room) {}
  Status Write(std::string_view data) override {
    if (data.size() > room_) return Status::IoError("full");
    room_ -= data.size();
    return Status::Ok();
  }

 private:
  size_t room_;
};

TEST(CountingSink, CountsWhatTheInnerSinkTook) {
  StringSink inner;
  CountingSink counted(inner);
  ASSERT_TRUE(counted.Write("abc").ok());
  char* at = counted.Lend(4);  // the inner sink's own memory
  ASSERT_NE(at, nullptr);
  std::memcpy(at, "de", 2);
  ASSERT_TRUE(counted.Commit(2).ok());
  EXPECT_EQ(counted.count(), 5u);
  EXPECT_EQ(inner.data(), "abcde");

  SmallSink small(4);
  CountingSink refused(small);
  ASSERT_TRUE(refused.Write("abc").ok());
  EXPECT_FALSE(refused.Write("de").ok());
  EXPECT_EQ(refused.count(), 3u) << "refused bytes are not counted";
  EXPECT_EQ(refused.Lend(1), nullptr) << "nothing to lend when the inner sink lends nothing";
}

TEST(Sha256Sink, HashesWritesAndCommitsInTheirOrder) {
  StringSink inner;
  Sha256Sink hashed(inner);
  ASSERT_TRUE(hashed.Write("abc").ok());
  char* at = hashed.Lend(8);
  ASSERT_NE(at, nullptr);
  std::memcpy(at, "defgh", 5);
  ASSERT_TRUE(hashed.Commit(2).ok());  // a lend committed in pieces
  ASSERT_TRUE(hashed.Commit(3).ok());
  at = hashed.Lend(2);  // a second lend (a resumed GET) starts at its own memory
  std::memcpy(at, "ij", 2);
  ASSERT_TRUE(hashed.Commit(2).ok());
  ASSERT_TRUE(hashed.Write("k").ok());
  EXPECT_EQ(inner.data(), "abcdefghijk");
  EXPECT_EQ(hashed.HexDigest(), HexLower(Sha256("abcdefghijk")));

  SmallSink small(4);
  Sha256Sink refused(small);
  ASSERT_TRUE(refused.Write("abc").ok());
  EXPECT_FALSE(refused.Write("de").ok());
  EXPECT_EQ(refused.HexDigest(), HexLower(Sha256("abc"))) << "refused bytes are not hashed";
}

std::string ReadAll(ByteSource& s, size_t chunk) {
  std::string out(chunk, '\0');
  std::string all;
  for (;;) {
    auto n = s.Read(out.data(), chunk);
    if (!n.ok() || *n == 0) return all;
    all.append(out.data(), *n);
  }
}

TEST(Md5Source, HashesAndCountsEachPass) {
  StringSource inner("abc");
  Md5Source md5(inner);
  EXPECT_FALSE(md5.Contiguous().has_value()) << "every byte must be read to be hashed";
  EXPECT_EQ(ReadAll(md5, 2), "abc");
  EXPECT_EQ(md5.count(), 3u);
  EXPECT_EQ(md5.HexDigest(), "900150983cd24fb0d6963f7d28e17f72");

  // A pass cut short, then a rewind: the hash and count start again.
  ASSERT_TRUE(md5.Rewind().ok());
  char one;
  ASSERT_EQ(*md5.Read(&one, 1), 1u);
  ASSERT_TRUE(md5.Rewind().ok());
  EXPECT_EQ(md5.count(), 0u);
  EXPECT_EQ(ReadAll(md5, 64), "abc");
  EXPECT_EQ(md5.count(), 3u);
  EXPECT_EQ(md5.HexDigest(), "900150983cd24fb0d6963f7d28e17f72");
}

}  // namespace
}  // namespace ferry
