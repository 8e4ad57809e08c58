#include "base/status.h"

#include <cerrno>
#include <cstring>

namespace ferry {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kNotFound: return "not_found";
    case ErrorCode::kAccessDenied: return "access_denied";
    case ErrorCode::kAlreadyExists: return "already_exists";
    case ErrorCode::kPreconditionFailed: return "precondition_failed";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kIoError: return "io_error";
    case ErrorCode::kNetwork: return "network";
    case ErrorCode::kTimeout: return "timeout";
    case ErrorCode::kThrottled: return "throttled";
    case ErrorCode::kServerError: return "server_error";
    case ErrorCode::kCorruption: return "corruption";
    case ErrorCode::kProtocol: return "protocol";
    case ErrorCode::kCancelled: return "cancelled";
    case ErrorCode::kInternal: return "internal";
  }
  return "unknown";
}

bool IsRetryableCode(ErrorCode code) {
  switch (code) {
    case ErrorCode::kNetwork:
    case ErrorCode::kTimeout:
    case ErrorCode::kThrottled:
    case ErrorCode::kServerError:
    case ErrorCode::kCorruption:  // a truncated or damaged transfer: fetch again
      return true;
    default:
      return false;
  }
}

Status::Status(ErrorCode code, std::string message)
    : code_(code), message_(std::move(message)) {}

Status Status::FromErrno(int err, std::string_view what) {
  ErrorCode code = ErrorCode::kIoError;
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      code = ErrorCode::kNotFound;
      break;
    case EACCES:
    case EPERM:
    case EROFS:
      code = ErrorCode::kAccessDenied;
      break;
    case EEXIST:
    case EISDIR:
    case ENOTEMPTY:
      code = ErrorCode::kAlreadyExists;
      break;
    case ENAMETOOLONG:
    case EINVAL:
      code = ErrorCode::kInvalidArgument;
      break;
    default:
      break;
  }
  std::string msg(what);
  msg += ": ";
  msg += std::strerror(err);
  return Status(code, std::move(msg));
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out = message_;
  if (http_status_ != 0 || !remote_code_.empty()) {
    out += " (";
    if (http_status_ != 0) out += std::to_string(http_status_);
    if (http_status_ != 0 && !remote_code_.empty()) out += ' ';
    out += remote_code_;
    out += ')';
  }
  return out;
}

Status Status::WithContext(std::string_view context) const {
  Status s = *this;
  s.message_ = std::string(context) + ": " + message_;
  return s;
}

Status Status::WithNote(std::string_view note) const {
  Status s = *this;
  s.message_ += "; ";
  s.message_ += note;
  return s;
}

}  // namespace ferry
