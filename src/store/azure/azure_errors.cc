#include "store/azure/azure_errors.h"

#include <charconv>

#include "s3/xml.h"

namespace ferry::azure {
namespace {

struct Known {
  const char* code;
  ErrorCode error;
  const char* text;
};

// The Azure error codes ferry distinguishes, with the words users see.
constexpr Known kKnown[] = {
    {"AuthenticationFailed", ErrorCode::kAccessDenied,
     "authentication failed (wrong account key or SAS?)"},
    // Azurite says this for a wrong key; Azure for a request its rules refuse.
    {"AuthorizationFailure", ErrorCode::kAccessDenied, "not authorized (wrong account key or SAS?)"},
    {"AuthorizationPermissionMismatch", ErrorCode::kAccessDenied,
     "not authorized (the SAS lacks a permission)"},
    {"AuthorizationResourceTypeMismatch", ErrorCode::kAccessDenied,
     "not authorized (the SAS lacks a resource type)"},
    {"InsufficientAccountPermissions", ErrorCode::kAccessDenied, "insufficient permissions"},
    {"InvalidAuthenticationInfo", ErrorCode::kAccessDenied, "invalid authentication information"},
    {"AccountIsDisabled", ErrorCode::kAccessDenied, "account is disabled"},
    {"ContainerNotFound", ErrorCode::kNotFound, "no such container"},
    {"BlobNotFound", ErrorCode::kNotFound, "no such blob"},
    {"ResourceNotFound", ErrorCode::kNotFound, "not found"},
    {"CannotVerifyCopySource", ErrorCode::kNotFound, "copy source not found"},
    {"InvalidBlockList", ErrorCode::kInvalidArgument, "invalid block list (a block is missing)"},
    {"InvalidBlockId", ErrorCode::kInvalidArgument, "invalid block id"},
    {"InvalidBlobOrBlock", ErrorCode::kInvalidArgument, "invalid blob or block"},
    {"InvalidRange", ErrorCode::kInvalidArgument, "range not satisfiable"},
    {"InvalidResourceName", ErrorCode::kInvalidArgument, "invalid name"},
    {"InvalidMetadata", ErrorCode::kInvalidArgument, "invalid metadata"},
    {"InvalidHeaderValue", ErrorCode::kInvalidArgument, "invalid header value"},
    {"InvalidQueryParameterValue", ErrorCode::kInvalidArgument, "invalid query parameter"},
    {"InvalidUri", ErrorCode::kInvalidArgument, "invalid URI"},
    {"OutOfRangeInput", ErrorCode::kInvalidArgument, "input out of range (name too long?)"},
    {"RequestBodyTooLarge", ErrorCode::kInvalidArgument, "request body too large"},
    {"Md5Mismatch", ErrorCode::kCorruption, "body does not match Content-MD5"},
    {"InvalidMd5", ErrorCode::kInvalidArgument, "invalid Content-MD5"},
    {"ConditionNotMet", ErrorCode::kPreconditionFailed, "precondition failed"},
    {"TargetConditionNotMet", ErrorCode::kPreconditionFailed, "precondition failed"},
    {"ContainerAlreadyExists", ErrorCode::kAlreadyExists, "container already exists"},
    {"BlobAlreadyExists", ErrorCode::kAlreadyExists, "blob already exists"},
    {"LeaseIdMissing", ErrorCode::kPreconditionFailed, "the blob is leased"},
    {"LeaseAlreadyPresent", ErrorCode::kAlreadyExists, "the blob is leased"},
    {"UnsupportedHeader", ErrorCode::kUnsupported, "header not supported by this server"},
    {"UnsupportedQueryParameter", ErrorCode::kUnsupported, "parameter not supported"},
    {"InvalidHeaderValueVersion", ErrorCode::kUnsupported, "API version not supported"},
    {"ServerBusy", ErrorCode::kThrottled, "server busy"},
    {"OperationTimedOut", ErrorCode::kTimeout, "operation timed out"},
    {"InternalError", ErrorCode::kServerError, "internal error"},
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
    case 503: return Status(ErrorCode::kThrottled, "server busy");
    default:
      if (status >= 500) return Status(ErrorCode::kServerError, "server error");
      return Status::Protocol("unexpected HTTP status");
  }
}

}  // namespace

Status ErrorFromResponse(const http::Response& resp) {
  std::string code = resp.Get("x-ms-error-code");
  if (code.empty()) {
    s3::ErrorDocument doc;
    if (s3::ParseError(resp.body, &doc)) code = doc.code;
  }
  Status s = FromStatusCode(resp.status);
  for (const auto& k : kKnown) {
    if (code == k.code) {
      s = Status(k.error, k.text);
      break;
    }
  }
  s.set_remote(resp.status, code);
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

}  // namespace ferry::azure
