#pragma once
// What every HTTP object store does with an error answer once it has found
// the service's error code in it (S3 in the <Error> body, s3/s3_errors.h;
// Azure in x-ms-error-code, azure/azure_errors.h), each with its own table
// of the codes it tells apart:
//
//   class   the table's entry for the code, else the HTTP status alone:
//           400, 401/403, 404, 405, 409, 412, 416, 429, 501, 503, other
//           5xx; any other status is a protocol error;
//   remote  the HTTP status and the code ("" when none), for messages;
//   retry   429 and every 5xx but 501 and 505 (which promise the same
//           answer next time) are retryable whatever the code said; the
//           rest as their class says (Status::retryable);
//   pacing  a Retry-After in seconds is kept (Status::retry_after).
//
// Pure; table-tested.

#include <span>
#include <string_view>

#include "base/status.h"
#include "http/client.h"

namespace ferry {

// A service error code a backend tells apart, with the words users see.
struct KnownErrorCode {
  const char* code;  // "NoSuchKey", "BlobNotFound"
  ErrorCode error;
  const char* text;
};

// `resp` is a non-2xx answer and `code` the service's error code found in
// it, "" when it has none (HEAD answers have no body).
Status ClassifyErrorAnswer(const http::Response& resp, std::string_view code,
                           std::span<const KnownErrorCode> known);

}  // namespace ferry
