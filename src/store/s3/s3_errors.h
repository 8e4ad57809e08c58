#pragma once
// Turns an S3 error answer into a classified Status: permanent for
// AccessDenied, NoSuchKey, SignatureDoesNotMatch...; retryable for 500, 502,
// 503 SlowDown, 504, RequestTimeout, with any Retry-After kept. S3's codes
// are told apart here; the rest is store/http_errors.h, as for Azure.

#include "base/status.h"
#include "http/client.h"

namespace ferry::s3 {

// `resp` is a non-2xx answer (HEAD answers have no body: the status alone
// decides).
Status ErrorFromResponse(const http::Response& resp);

}  // namespace ferry::s3
