#pragma once
// The flexible checksum of an upload (x-amz-checksum-*), checked while its
// body streams, shared by the gateway and the test server.
//
// A request names its checksum either as a header with the value
// (x-amz-checksum-crc32: <base64>) or as a trailer that an aws-chunked body
// carries after its last chunk (x-amz-trailer: x-amz-checksum-crc32). The
// check computes that algorithm over the decoded body and, at the end,
// compares: 400 BadDigest on a mismatch (the caller stores nothing), 400
// InvalidRequest when the value is not a checksum of that algorithm or more
// than one checksum is named. x-amz-sdk-checksum-algorithm alone (no value)
// names none: there is nothing to compare.

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "crypto/checksum.h"
#include "s3/sigv4.h"

namespace ferry::s3 {

// An algorithm and its base64 value, as stored with an object.
struct ObjectChecksum {
  ChecksumAlgorithm algorithm;
  std::string value;
};

class ChecksumCheck {
 public:
  // From the request's headers (lower-case names). No checksum named: an
  // empty check (active() false) that accepts any body.
  static Result<ChecksumCheck> FromHeaders(const KeyValues& lower_headers);

  bool active() const { return summer_.has_value(); }
  void Update(std::string_view decoded);
  // The body has ended; `trailers` are the aws-chunked trailers (empty for
  // a plain body). Returns the verified checksum (nullopt when none was
  // named) or the S3 error.
  Result<std::optional<ObjectChecksum>> Finish(const KeyValues& trailers);

 private:
  std::optional<Checksummer> summer_;
  std::string expected_;  // from the header; "" = from the trailer
};

}  // namespace ferry::s3
