#pragma once
// Turns an Azure Blob Storage error answer into a classified Status, as
// s3_errors.h does for S3. The error code comes from the x-ms-error-code
// header (present on HEAD answers too), else from the <Error><Code> body:
// permanent for AuthenticationFailed, ContainerNotFound, BlobNotFound,
// InvalidBlockList...; retryable for 500 InternalError / OperationTimedOut,
// 503 ServerBusy (throttling) and every other 5xx but 501 and 505, with any
// Retry-After kept. Azure's codes are told apart here; the rest is
// store/http_errors.h, as for S3.

#include "base/status.h"
#include "http/client.h"

namespace ferry::azure {

// `resp` is a non-2xx answer.
Status ErrorFromResponse(const http::Response& resp);

}  // namespace ferry::azure
