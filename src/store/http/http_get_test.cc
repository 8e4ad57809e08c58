#include "store/http/http_get.h"

#include <gtest/gtest.h>

namespace ferry {
namespace {

GetOptions Range(uint64_t offset, std::optional<uint64_t> length) {
  GetOptions o;
  o.range = ByteRange{offset, length};
  return o;
}

TEST(HttpGet, RangeToResume) {
  struct Case {
    GetOptions options;
    uint64_t got;
    bool ranged;
    uint64_t offset;
    const char* value;
  } cases[] = {
      {GetOptions{}, 0, false, 0, ""},  // the whole object
      {GetOptions{}, 100, true, 100, "bytes=100-"},
      {Range(0, std::nullopt), 0, false, 0, ""},
      {Range(10, std::nullopt), 0, true, 10, "bytes=10-"},
      {Range(10, std::nullopt), 5, true, 15, "bytes=15-"},
      {Range(0, 10), 0, true, 0, "bytes=0-9"},
      {Range(10, 10), 0, true, 10, "bytes=10-19"},
      {Range(10, 10), 4, true, 14, "bytes=14-19"},
  };
  for (const Case& c : cases) {
    ResumeRange r = RangeToResume(c.options, c.got);
    EXPECT_EQ(r.ranged, c.ranged) << c.value;
    EXPECT_EQ(r.offset, c.offset) << c.value;
    EXPECT_EQ(r.value, c.value);
  }
}

http::Response RangeAnswer(int status, const char* content_range) {
  http::Response r;
  r.status = status;
  if (*content_range) r.headers.emplace_back("Content-Range", content_range);
  return r;
}

TEST(HttpGet, CheckRangeAnswer) {
  ResumeRange whole;
  ResumeRange from10 = RangeToResume(Range(10, std::nullopt), 0);
  struct Case {
    const ResumeRange* want;
    int status;
    const char* content_range;
    ErrorCode code;
  } cases[] = {
      {&whole, 200, "", ErrorCode::kOk},
      {&whole, 206, "bytes 0-9/10", ErrorCode::kOk},
      {&from10, 206, "bytes 10-19/100", ErrorCode::kOk},
      {&from10, 206, "bytes 10-19/*", ErrorCode::kOk},
      {&from10, 200, "", ErrorCode::kProtocol},  // Range ignored: the whole object
      {&from10, 206, "bytes 0-19/100", ErrorCode::kProtocol},
      {&from10, 206, "bytes 100-119/1000", ErrorCode::kProtocol},
      {&from10, 206, "", ErrorCode::kProtocol},
      {&from10, 206, "bytes 10-9/10", ErrorCode::kInvalidArgument},  // Azurite at the end
  };
  for (const Case& c : cases) {
    Status s = CheckRangeAnswer(RangeAnswer(c.status, c.content_range), *c.want);
    EXPECT_EQ(s.code(), c.code) << c.status << " " << c.content_range << ": " << s.ToString();
  }
}

TEST(HttpGet, InfoFromAnswer) {
  http::Response r;
  r.status = 200;
  r.headers = {{"ETag", "\"abc\""},
               {"Content-Length", "10"},
               {"Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT"},
               {"Content-Type", "text/plain"},
               {"Content-Encoding", "zstd"},
               {"Content-Disposition", "attachment"},
               {"Cache-Control", "no-cache"},
               {"Content-Language", "fr"},
               {"Expires", "0"},
               {"x-amz-meta-a", "b"}};
  bool ranged = true;
  ObjectInfo info = InfoFromAnswer("k", r, &ranged);
  EXPECT_FALSE(ranged);
  EXPECT_EQ(info.key, "k");
  EXPECT_EQ(info.etag, "abc");
  EXPECT_EQ(info.size, 10u);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>(info.last_modified.time_since_epoch())
                .count(),
            784111777);
  EXPECT_EQ(info.headers.content_type, "text/plain");
  EXPECT_EQ(info.headers.content_encoding, "zstd");
  EXPECT_EQ(info.headers.content_disposition, "attachment");
  EXPECT_EQ(info.headers.cache_control, "no-cache");
  EXPECT_EQ(info.headers.content_language, "fr");
  EXPECT_EQ(info.headers.expires, "") << "the backend's to read";
  EXPECT_TRUE(info.headers.user.empty()) << "the backend's to read";
}

TEST(HttpGet, SizeOfARangedAnswerIsTheWholeObjects) {
  struct Case {
    const char* content_range;
    uint64_t size;
    bool ranged;
  } cases[] = {
      {"", 10, false},
      {"bytes 0-9/1234", 1234, true},
      {"bytes */1234", 1234, true},  // a 416's
      {"bytes 0-9/*", 10, false},    // total unknown: the length is all we have
  };
  for (const Case& c : cases) {
    http::Response r;
    r.headers = {{"Content-Length", "10"}};
    if (*c.content_range) r.headers.emplace_back("Content-Range", c.content_range);
    bool ranged = !c.ranged;
    EXPECT_EQ(InfoFromAnswer("k", r, &ranged).size, c.size) << c.content_range;
    EXPECT_EQ(ranged, c.ranged) << c.content_range;
  }
  http::Response none;
  EXPECT_EQ(InfoFromAnswer("k", none).size, 0u);
}

}  // namespace
}  // namespace ferry
