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

int HexNibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 0;
}

}  // namespace

Status S3Error(int http_status, std::string code, std::string message) {
  Status st(CodeForHttp(http_status), std::move(message));
  st.set_remote(http_status, std::move(code));
  return st;
}

std::string MultipartEtag(const std::vector<std::string>& part_md5_hex) {
  std::string binary;
  binary.reserve(part_md5_hex.size() * 16);
  for (const auto& hex : part_md5_hex) {
    for (size_t i = 0; i + 1 < hex.size(); i += 2) {
      binary += static_cast<char>(HexNibble(hex[i]) * 16 + HexNibble(hex[i + 1]));
    }
  }
  return HexLower(Md5(binary)) + "-" + std::to_string(part_md5_hex.size());
}

std::string_view StripQuotes(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    return etag.substr(1, etag.size() - 2);
  }
  return etag;
}

}  // namespace ferry::s3server
