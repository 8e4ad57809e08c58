#include "store/azure/azure_errors.h"

#include <gtest/gtest.h>

namespace ferry::azure {
namespace {

http::Response Answer(int status, std::string code_header, std::string body = "") {
  http::Response r;
  r.status = status;
  if (!code_header.empty()) r.headers.emplace_back("x-ms-error-code", code_header);
  r.body = std::move(body);
  return r;
}

TEST(AzureErrors, Classification) {
  struct Case {
    int status;
    const char* header;
    const char* body;
    ErrorCode code;
    bool retryable;
    const char* text;
  } cases[] = {
      {403, "AuthenticationFailed", "", ErrorCode::kAccessDenied, false,
       "authentication failed (wrong account key or SAS?) (403 AuthenticationFailed)"},
      {403, "AuthorizationPermissionMismatch", "", ErrorCode::kAccessDenied, false, nullptr},
      {404, "ContainerNotFound", "", ErrorCode::kNotFound, false,
       "no such container (404 ContainerNotFound)"},
      {404, "BlobNotFound", "", ErrorCode::kNotFound, false, "no such blob (404 BlobNotFound)"},
      {404, "", "", ErrorCode::kNotFound, false, "not found (404)"},  // a HEAD without detail
      {409, "LeaseAlreadyPresent", "", ErrorCode::kAlreadyExists, false, nullptr},
      {409, "", "", ErrorCode::kAlreadyExists, false, nullptr},
      {412, "ConditionNotMet", "", ErrorCode::kPreconditionFailed, false, nullptr},
      {400, "InvalidBlockList", "", ErrorCode::kInvalidArgument, false, nullptr},
      {400, "Md5Mismatch", "", ErrorCode::kCorruption, true, nullptr},  // read again, as S3's BadDigest
      {416, "InvalidRange", "", ErrorCode::kInvalidArgument, false, nullptr},
      {500, "InternalError", "", ErrorCode::kServerError, true, nullptr},
      {500, "OperationTimedOut", "", ErrorCode::kTimeout, true, nullptr},
      {503, "ServerBusy", "", ErrorCode::kThrottled, true, "server busy (503 ServerBusy)"},
      {503, "", "", ErrorCode::kThrottled, true, nullptr},
      {502, "", "", ErrorCode::kServerError, true, nullptr},
      {501, "", "", ErrorCode::kUnsupported, false, nullptr},
      // The code from the body when the header is missing.
      {404, "",
       "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>ContainerNotFound</Code>"
       "<Message>The specified container does not exist.</Message></Error>",
       ErrorCode::kNotFound, false, "no such container (404 ContainerNotFound)"},
  };
  for (const Case& c : cases) {
    Status s = ErrorFromResponse(Answer(c.status, c.header, c.body));
    EXPECT_EQ(s.code(), c.code) << c.status << " " << c.header;
    EXPECT_EQ(s.retryable(), c.retryable) << c.status << " " << c.header;
    EXPECT_EQ(s.http_status(), c.status);
    if (c.text != nullptr) {
      EXPECT_EQ(s.ToString(), c.text);
    }
  }
}

TEST(AzureErrors, RetryAfterIsKept) {
  http::Response r = Answer(503, "ServerBusy");
  r.headers.emplace_back("Retry-After", "7");
  Status s = ErrorFromResponse(r);
  ASSERT_TRUE(s.retry_after().has_value());
  EXPECT_EQ(*s.retry_after(), std::chrono::milliseconds(7000));
}

}  // namespace
}  // namespace ferry::azure
