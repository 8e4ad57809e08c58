#pragma once
// Where requests for a bucket go: path-style (https://endpoint/bucket/key)
// for a custom endpoint, virtual-hosted style
// (https://bucket.s3.REGION.amazonaws.com/key) for AWS itself, except for
// bucket names with dots, which would not match AWS's wildcard certificate
// and so stay path-style. Pure; table-tested.

#include <string>

#include "base/status.h"
#include "http/endpoint.h"

namespace ferry::s3 {

struct Addressing {
  http::Endpoint endpoint;
  bool path_style = true;
  // The request path of `key` ("" for bucket-level requests), decoded.
  std::string PathFor(const std::string& bucket, std::string_view key) const;
};

// `endpoint_url` "" means AWS in `region`.
Result<Addressing> ResolveAddressing(const std::string& bucket, const std::string& endpoint_url,
                                     const std::string& region);

}  // namespace ferry::s3
