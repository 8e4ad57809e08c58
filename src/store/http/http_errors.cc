#include "store/http/http_errors.h"

#include <charconv>
#include <string>

namespace ferry {
namespace {

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

Status ClassifyErrorAnswer(const http::Response& resp, std::string_view code,
                           std::span<const KnownErrorCode> known) {
  Status s = FromStatusCode(resp.status);
  for (const KnownErrorCode& k : known) {
    if (code == k.code) {
      s = Status(k.error, k.text);
      break;
    }
  }
  s.set_remote(resp.status, std::string(code));
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

}  // namespace ferry
