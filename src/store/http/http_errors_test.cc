#include "store/http/http_errors.h"

#include <gtest/gtest.h>

namespace ferry {
namespace {

constexpr KnownErrorCode kTable[] = {
    {"NoSuchThing", ErrorCode::kNotFound, "no such thing"},
    {"Busy", ErrorCode::kThrottled, "busy"},
    {"Broken", ErrorCode::kServerError, "broken"},
    {"Conflict", ErrorCode::kAlreadyExists, "taken"},
};

http::Response Answer(int status, const char* retry_after = nullptr) {
  http::Response r;
  r.status = status;
  if (retry_after) r.headers.emplace_back("Retry-After", retry_after);
  return r;
}

TEST(HttpErrors, ClassByCodeElseByStatus) {
  struct Case {
    int status;
    const char* code;
    ErrorCode want;
    bool retryable;
  } cases[] = {
      {404, "NoSuchThing", ErrorCode::kNotFound, false},
      {404, "", ErrorCode::kNotFound, false},
      {404, "Unheard", ErrorCode::kNotFound, false},
      {400, "", ErrorCode::kInvalidArgument, false},
      {401, "", ErrorCode::kAccessDenied, false},
      {403, "", ErrorCode::kAccessDenied, false},
      {405, "", ErrorCode::kUnsupported, false},
      {409, "", ErrorCode::kAlreadyExists, false},
      {412, "", ErrorCode::kPreconditionFailed, false},
      {416, "", ErrorCode::kInvalidArgument, false},
      {429, "", ErrorCode::kThrottled, true},
      {503, "", ErrorCode::kThrottled, true},
      {503, "Busy", ErrorCode::kThrottled, true},
      {500, "", ErrorCode::kServerError, true},
      {502, "", ErrorCode::kServerError, true},
      {504, "", ErrorCode::kServerError, true},
      {302, "", ErrorCode::kProtocol, false},
      // A status that promises the same answer next time is never retried,
      // whatever the code; one that may change always is.
      {501, "", ErrorCode::kUnsupported, false},
      {505, "", ErrorCode::kServerError, false},
      {505, "Broken", ErrorCode::kServerError, false},
      {500, "Conflict", ErrorCode::kAlreadyExists, true},
      {429, "NoSuchThing", ErrorCode::kNotFound, true},
  };
  for (const Case& c : cases) {
    Status s = ClassifyErrorAnswer(Answer(c.status), c.code, kTable);
    EXPECT_EQ(s.code(), c.want) << c.status << " " << c.code;
    EXPECT_EQ(s.retryable(), c.retryable) << c.status << " " << c.code;
    EXPECT_EQ(s.http_status(), c.status);
    EXPECT_EQ(s.remote_code(), c.code);
  }
}

TEST(HttpErrors, MessagesNameTheStatusAndCode) {
  EXPECT_EQ(ClassifyErrorAnswer(Answer(404), "NoSuchThing", kTable).ToString(),
            "no such thing (404 NoSuchThing)");
  EXPECT_EQ(ClassifyErrorAnswer(Answer(404), "", kTable).ToString(), "not found (404)");
  EXPECT_EQ(ClassifyErrorAnswer(Answer(404), "Unheard", kTable).ToString(),
            "not found (404 Unheard)");
  EXPECT_EQ(ClassifyErrorAnswer(Answer(503), "", kTable).ToString(), "service unavailable (503)");
  EXPECT_EQ(ClassifyErrorAnswer(Answer(502), "", kTable).ToString(), "server error (502)");
}

TEST(HttpErrors, RetryAfterInSecondsIsKept) {
  struct Case {
    const char* header;
    int64_t want_ms;  // -1: none kept
  } cases[] = {
      {"7", 7000}, {"0", 0}, {"-1", -1}, {"soon", -1},
      {"Wed, 21 Oct 2015 07:28:00 GMT", -1},  // the date form is not read
  };
  for (const Case& c : cases) {
    Status s = ClassifyErrorAnswer(Answer(503, c.header), "Busy", kTable);
    if (c.want_ms < 0) {
      EXPECT_FALSE(s.retry_after().has_value()) << c.header;
    } else {
      ASSERT_TRUE(s.retry_after().has_value()) << c.header;
      EXPECT_EQ(s.retry_after()->count(), c.want_ms) << c.header;
    }
  }
  EXPECT_FALSE(ClassifyErrorAnswer(Answer(503), "", kTable).retry_after().has_value());
}

}  // namespace
}  // namespace ferry
