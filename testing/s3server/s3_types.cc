#include "s3_types.h"

#include "crypto/digest.h"

namespace ferry::s3server {
namespace {

ErrorCode CodeForHttp(int http_status) {
  switch (http_status) {
    case 400:
    case 416:
      return ErrorCode::kInvalidArgument;
    case 403:
      return ErrorCode::kAccessDenied;
    case 404:
      return ErrorCode::kNotFound;
    case 409:
      return ErrorCode::kAlreadyExists;
    case 412:
      return ErrorCode::kPreconditionFailed;
    case 501:
      return ErrorCode::kUnsupported;
    case 503:
      return ErrorCode::kThrottled;
    default:
      return http_status >= 500 ? ErrorCode::kServerError : ErrorCode::kInvalidArgument;
  }
}

}  // namespace

Status S3Error(int http_status, std::string code, std::string message) {
  Status st(CodeForHttp(http_status), std::move(message));
  st.set_remote(http_status, std::move(code));
  return st;
}

std::string_view StripQuotes(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    return etag.substr(1, etag.size() - 2);
  }
  return etag;
}

}  // namespace ferry::s3server
