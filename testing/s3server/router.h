#pragma once
// Request routing for the test server: ferry's own S3 router
// (src/s3/route.h, which the gateway uses too) on the server's request view.

#include "base/status.h"
#include "http_types.h"
#include "s3/route.h"

namespace ferry::s3server {

using s3::IsOpName;
using s3::Op;
using s3::OpName;
using s3::S3Target;

// Fails with 400 InvalidURI for undecodable targets.
Result<S3Target> Route(const HttpRequest& req);

}  // namespace ferry::s3server
