#pragma once
// S3 request routing, pure: from method, target and Host to the operation,
// bucket and key. Path-style ("/bucket/key") and virtual-host style (Host
// "bucket.localhost[:port]") addressing are both accepted. Shared by every
// ferry server that speaks S3: the gateway (`ferry gateway`) and the
// project's test server (testing/s3server).

#include <string>
#include <string_view>

#include "base/status.h"
#include "s3/sigv4.h"

namespace ferry::s3 {

enum class Op {
  kListBuckets,
  kCreateBucket,
  kDeleteBucket,
  kHeadBucket,
  kListObjectsV2,
  kListObjectsV1,
  kListUploads,
  kBucketLocation,
  kDeleteObjects,
  kPutObject,
  kCopyObject,
  kGetObject,
  kHeadObject,
  kDeleteObject,
  kCreateMultipart,
  kUploadPart,
  kCompleteMultipart,
  kAbortMultipart,
  kListParts,
  kGetObjectAttributes,  // GET ?attributes
  kUnsupported,          // a subresource this server does not implement (501)
};

// Stable name for counters and fault selection: "list-buckets",
// "create-bucket", "delete-bucket", "head-bucket", "list" (both ListObjects
// versions), "list-uploads", "bucket-location", "delete-objects", "put",
// "copy", "get", "head", "delete", "create-multipart", "upload-part",
// "complete", "abort", "list-parts", "get-attributes", "unsupported".
std::string_view OpName(Op op);
bool IsOpName(std::string_view name);

struct S3Target {
  Op op = Op::kUnsupported;
  std::string bucket;          // "" for service-level requests
  std::string key;             // decoded; "" for bucket-level requests
  std::string canonical_path;  // decoded request path as received (SigV4 input)
  KeyValues query;             // decoded names and values, in arrival order

  const std::string* Query(std::string_view name) const;
  bool HasQuery(std::string_view name) const { return Query(name) != nullptr; }
};

// What Route reads of a request besides its method and target.
struct RouteInput {
  std::string_view method;
  std::string_view target;   // as received: "/b/k%20x?list-type=2"
  std::string_view host;     // the Host field ("" when absent)
  bool copy_source = false;  // an x-amz-copy-source field is present
};

// Fails with 400 InvalidURI for undecodable targets.
Result<S3Target> Route(const RouteInput& req);

}  // namespace ferry::s3
