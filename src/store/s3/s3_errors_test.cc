#include "store/s3/s3_errors.h"

#include <gtest/gtest.h>

namespace ferry::s3 {
namespace {

http::Response Answer(int status, const std::string& code, const char* retry_after = nullptr) {
  http::Response r;
  r.status = status;
  if (!code.empty()) {
    r.body = "<?xml version=\"1.0\"?><Error><Code>" + code + "</Code><Message>m</Message></Error>";
  }
  if (retry_after) r.headers.emplace_back("Retry-After", retry_after);
  return r;
}

TEST(S3Errors, ClassifiesRetryableAndPermanent) {
  struct Case {
    int status;
    const char* code;
    ErrorCode want;
    bool retryable;
    const char* text;
  } cases[] = {
      {403, "AccessDenied", ErrorCode::kAccessDenied, false, "access denied (403 AccessDenied)"},
      {403, "InvalidAccessKeyId", ErrorCode::kAccessDenied, false, nullptr},
      {403, "SignatureDoesNotMatch", ErrorCode::kAccessDenied, false, nullptr},
      {404, "NoSuchKey", ErrorCode::kNotFound, false, "no such key (404 NoSuchKey)"},
      {404, "NoSuchBucket", ErrorCode::kNotFound, false, "no such bucket (404 NoSuchBucket)"},
      {500, "InternalError", ErrorCode::kServerError, true, nullptr},
      {502, "", ErrorCode::kServerError, true, "server error (502)"},
      {503, "SlowDown", ErrorCode::kThrottled, true, "slow down (503 SlowDown)"},
      {504, "", ErrorCode::kServerError, true, nullptr},
      {400, "RequestTimeout", ErrorCode::kTimeout, true, nullptr},
      {400, "BadDigest", ErrorCode::kCorruption, true, nullptr},
      {400, "InvalidPart", ErrorCode::kInvalidArgument, false, nullptr},
      {404, "", ErrorCode::kNotFound, false, "not found (404)"},  // HEAD: no body
      {429, "", ErrorCode::kThrottled, true, nullptr},
  };
  for (const auto& c : cases) {
    Status s = ErrorFromResponse(Answer(c.status, c.code));
    EXPECT_EQ(s.code(), c.want) << c.status << " " << c.code;
    EXPECT_EQ(s.retryable(), c.retryable) << c.status << " " << c.code;
    if (c.text) {
      EXPECT_EQ(s.ToString(), c.text);
    }
  }
}

TEST(S3Errors, KeepsRetryAfter) {
  Status s = ErrorFromResponse(Answer(503, "SlowDown", "3"));
  ASSERT_TRUE(s.retry_after().has_value());
  EXPECT_EQ(s.retry_after()->count(), 3000);
}

}  // namespace
}  // namespace ferry::s3
