#include "store/azure/azure_errors.h"

#include "s3/xml.h"
#include "store/http/http_errors.h"

namespace ferry::azure {
namespace {

// The Azure error codes ferry distinguishes, with the words users see.
constexpr KnownErrorCode kKnown[] = {
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

}  // namespace

Status ErrorFromResponse(const http::Response& resp) {
  std::string code = resp.Get("x-ms-error-code");
  if (code.empty()) {
    s3::ErrorDocument doc;
    if (s3::ParseError(resp.body, &doc)) code = doc.code;
  }
  return ClassifyErrorAnswer(resp, code, kKnown);
}

}  // namespace ferry::azure
