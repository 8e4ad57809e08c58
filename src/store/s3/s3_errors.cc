#include "store/s3/s3_errors.h"

#include "s3/xml.h"
#include "store/http/http_errors.h"

namespace ferry::s3 {
namespace {

// The S3 error codes ferry distinguishes, with the words users see.
constexpr KnownErrorCode kKnown[] = {
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
    {"BadDigest", ErrorCode::kCorruption, "body does not match its Content-MD5 or checksum"},
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

}  // namespace

Status ErrorFromResponse(const http::Response& resp) {
  ErrorDocument doc;
  std::string code = ParseError(resp.body, &doc) ? doc.code : "";
  return ClassifyErrorAnswer(resp, code, kKnown);
}

}  // namespace ferry::s3
