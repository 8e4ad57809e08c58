#include "s3_types.h"

#include "crypto/digest.h"
#include "s3/sigv4_verify.h"

namespace ferry::s3server {

Status S3Error(int http_status, std::string code, std::string message) {
  return s3::S3ErrorStatus(http_status, std::move(code), std::move(message));
}

std::string_view StripQuotes(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    return etag.substr(1, etag.size() - 2);
  }
  return etag;
}

}  // namespace ferry::s3server
