#include "store/s3/s3_errors.h"

#include <charconv>

#include "s3/xml.h"

namespace ferry::s3 {
namespace {

struct Known {
  const char* code;
  ErrorCode error;
  const char* text;
};

// The S3 error codes ferry distinguishes, with the words users see.
constexpr Known kKnown[] = {
    {"AccessDenied", ErrorCode::kAccessDenied, "access denied"},
    {"InvalidAccessKeyId", ErrorCode::kAccessDenied, "access key id not recognised"},
    {"SignatureDoesNotMatch", ErrorCode::kAccessDenied,
     "signature does not match (wrong secret key?)"},
    {"ExpiredToken", ErrorCode::kAccessDenied, "security token expired"},
    {"InvalidToken", ErrorCode::kAccessDenied, "security token invalid"},
    {"RequestTimeTooSkewed", ErrorCode::kAccessDenied, "request time too skewed (check the clock)"},
    {"NoSuchKey", ErrorCode::kNotFound, "no such key"},
    {"NoSuchBucket", ErrorCode::kNotFound, "no such bucket"},
    {"NoSuchUpload", ErrorCode::kNotFound, "no such multipart upload"},
    {"InvalidPart", ErrorCode::kInvalidArgument, "invalid part"},
    {"InvalidPartOrder", ErrorCode::kInvalidArgument, "invalid part order"},
    {"EntityTooSmall", ErrorCode::kInvalidArgument, "part too small"},
    {"EntityTooLarge", ErrorCode::kInvalidArgument, "object too large"},
    {"InvalidRange", ErrorCode::kInvalidArgument, "range not satisfiable"},
    {"InvalidBucketName", ErrorCode::kInvalidArgument, "invalid bucket name"},
    {"PreconditionFailed", ErrorCode::kPreconditionFailed, "precondition failed"},
    {"BadDigest", ErrorCode::kCorruption, "body does not match Content-MD5"},
    {"XAmzContentSHA256Mismatch", ErrorCode::kCorruption, "body does not match its SHA-256"},
    {"IncompleteBody", ErrorCode::kCorruption, "incomplete body"},
    {"RequestTimeout", ErrorCode::kTimeout, "request timeout"},
    {"SlowDown", ErrorCode::kThrottled, "slow down"},
    {"ServiceUnavailable", ErrorCode::kThrottled, "service unavailable"},
    {"InternalError", ErrorCode::kServerError, "internal error"},
    {"AuthorizationHeaderMalformed", ErrorCode::kInvalidArgument,
     "signed for the wrong region (set AWS_REGION)"},
    {"PermanentRedirect", ErrorCode::kInvalidArgument,
     "bucket is in another region or needs another endpoint"},
    {"BucketAlreadyOwnedByYou", ErrorCode::kAlreadyExists, "bucket already exists"},
    {"BucketAlreadyExists", ErrorCode::kAlreadyExists, "bucket already exists"},
    {"BucketNotEmpty", ErrorCode::kAlreadyExists, "bucket not empty"},
    {"NotImplemented", ErrorCode::kUnsupported, "not implemented by this server"},
};

Status FromStatusCode(int status) {
  switch (status) {
    case 400: return Status::InvalidArgument("bad request");
    case 401:
    case 403: return Status::AccessDenied("access denied");
    case 404: return Status::NotFound("not found");
    case 405: return Status::Unsupported("method not allowed");
    case 409: return Status::AlreadyExists("conflict");
    case 412: return Status(ErrorCode::kPreconditionFailed, "precondition failed");
    case 416: return Status::InvalidArgument("range not satisfiable");
    case 429: return Status(ErrorCode::kThrottled, "too many requests");
    case 501: return Status::Unsupported("not implemented by this server");
    case 503: return Status(ErrorCode::kThrottled, "service unavailable");
    default:
      if (status >= 500) return Status(ErrorCode::kServerError, "server error");
      return Status::Protocol("unexpected HTTP status");
  }
}

}  // namespace

Status ErrorFromResponse(const http::Response& resp) {
  ErrorDocument doc;
  Status s;
  if (ParseError(resp.body, &doc)) {
    s = FromStatusCode(resp.status);
    for (const auto& k : kKnown) {
      if (doc.code == k.code) {
        s = Status(k.error, k.text);
        break;
      }
    }
    s.set_remote(resp.status, doc.code);
  } else {
    s = FromStatusCode(resp.status);
    s.set_remote(resp.status, "");
  }
  // 5xx and 429 are retryable whatever the body says, except the statuses
  // that promise the same answer next time.
  if ((resp.status >= 500 && resp.status != 501 && resp.status != 505) || resp.status == 429) {
    s.set_retryable(true);
  }
  if (resp.status == 501 || resp.status == 505) s.set_retryable(false);
  if (const std::string* ra = resp.Find("retry-after")) {
    int seconds = 0;
    auto [p, ec] = std::from_chars(ra->data(), ra->data() + ra->size(), seconds);
    if (ec == std::errc() && seconds >= 0) {
      s.set_retry_after(std::chrono::milliseconds(int64_t{seconds} * 1000));
    }
  }
  return s;
}

}  // namespace ferry::s3
