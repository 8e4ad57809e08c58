#pragma once
// Errors as values. A Status is cheap when OK and carries, on failure, a code
// that says what went wrong, whether a retry may succeed, and (for errors that
// came from a remote store) the HTTP status, the S3 error code and any
// Retry-After hint. Callers decide from code() and retryable(), never from the
// message text.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace ferry {

enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,   // the caller's input is malformed (bad URL, bad size...)
  kNotFound,          // no such key, bucket or file
  kAccessDenied,      // credentials rejected or not permitted
  kAlreadyExists,     // a conflicting object or path is in the way
  kPreconditionFailed,
  kUnsupported,       // the backend cannot do this operation
  kIoError,           // local file-system failure
  kNetwork,           // connection refused / reset, DNS, TLS handshake
  kTimeout,           // an operation exceeded its deadline
  kThrottled,         // 503 SlowDown, 429
  kServerError,       // 5xx from a remote store
  kCorruption,        // checksum mismatch, truncated body, bad ETag
  kProtocol,          // a peer answered something we cannot parse
  kCancelled,
  kInternal,
};

// Stable lower-case name of a code, for logs and JSON ("not_found").
std::string_view ErrorCodeName(ErrorCode code);

// True for the classes where the same request may succeed later.
bool IsRetryableCode(ErrorCode code);

class Status {
 public:
  Status() = default;  // OK
  Status(ErrorCode code, std::string message);

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return {ErrorCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {ErrorCode::kNotFound, std::move(m)}; }
  static Status AccessDenied(std::string m) { return {ErrorCode::kAccessDenied, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {ErrorCode::kAlreadyExists, std::move(m)}; }
  static Status Unsupported(std::string m) { return {ErrorCode::kUnsupported, std::move(m)}; }
  static Status IoError(std::string m) { return {ErrorCode::kIoError, std::move(m)}; }
  static Status Network(std::string m) { return {ErrorCode::kNetwork, std::move(m)}; }
  static Status Timeout(std::string m) { return {ErrorCode::kTimeout, std::move(m)}; }
  static Status Corruption(std::string m) { return {ErrorCode::kCorruption, std::move(m)}; }
  static Status Protocol(std::string m) { return {ErrorCode::kProtocol, std::move(m)}; }
  static Status Cancelled(std::string m) { return {ErrorCode::kCancelled, std::move(m)}; }
  static Status Internal(std::string m) { return {ErrorCode::kInternal, std::move(m)}; }
  // Errno-based local failure: "open /x: No such file or directory" with the
  // code chosen from errno (ENOENT -> kNotFound, EACCES -> kAccessDenied...).
  static Status FromErrno(int err, std::string_view what);

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Retryable by class unless explicitly overridden (a remote store may mark
  // an otherwise permanent-looking answer as retryable, e.g. RequestTimeout).
  bool retryable() const { return retryable_.value_or(IsRetryableCode(code_)); }
  Status& set_retryable(bool r) { retryable_ = r; return *this; }

  // Remote detail: HTTP status (0 if none) and the store's error code.
  int http_status() const { return http_status_; }
  const std::string& remote_code() const { return remote_code_; }
  Status& set_remote(int http_status, std::string remote_code) {
    http_status_ = http_status;
    remote_code_ = std::move(remote_code);
    return *this;
  }
  std::optional<std::chrono::milliseconds> retry_after() const { return retry_after_; }
  Status& set_retry_after(std::chrono::milliseconds d) { retry_after_ = d; return *this; }

  // "access denied (403 AccessDenied)"; "OK" when ok().
  std::string ToString() const;

  // Returns a copy whose message is prefixed with `context: `.
  Status WithContext(std::string_view context) const;
  // Returns a copy whose message ends with `; note`.
  Status WithNote(std::string_view note) const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
  std::optional<bool> retryable_;
  int http_status_ = 0;
  std::string remote_code_;
  std::optional<std::chrono::milliseconds> retry_after_;
};

// A value or the Status that explains its absence. Never holds an OK status
// without a value.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT
  Result(ErrorCode code, std::string message) : v_(Status(code, std::move(message))) {}

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace ferry

// Early-return helpers, in the leveldb style.
#define FERRY_RETURN_IF_ERROR(expr)            \
  do {                                         \
    ::ferry::Status _st = (expr);              \
    if (!_st.ok()) return _st;                 \
  } while (0)

#define FERRY_CONCAT_INNER(a, b) a##b
#define FERRY_CONCAT(a, b) FERRY_CONCAT_INNER(a, b)
#define FERRY_ASSIGN_OR_RETURN(lhs, expr) \
  FERRY_ASSIGN_OR_RETURN_IMPL(FERRY_CONCAT(_res_, __LINE__), lhs, expr)
#define FERRY_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()
