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
#include <vector>

#include "base/status.h"
#include "crypto/checksum.h"
#include "s3/sigv4.h"

namespace ferry::s3 {

using ferry::ChecksumType;
using ferry::ObjectChecksum;
std::string_view ChecksumTypeName(ChecksumType t);  // FULL_OBJECT, COMPOSITE
std::optional<ChecksumType> ParseChecksumType(std::string_view name);

// The algorithm newly written objects get when their upload names none:
// S3 has computed CRC64NVME for those since 2025.
inline constexpr ChecksumAlgorithm kDefaultChecksumAlgorithm = ChecksumAlgorithm::kCrc64Nvme;

// The checksum a multipart upload will carry, from CreateMultipartUpload's
// x-amz-checksum-algorithm and x-amz-checksum-type (lower-case names):
// CRC64NVME full-object when neither is sent; COMPOSITE by default for the
// others. 400 InvalidRequest for a combination S3 refuses (SHA1/SHA256 are
// composite only, CRC64NVME full-object only) or an unknown name. The
// value is empty.
Result<ObjectChecksum> MultipartChecksumPlan(const KeyValues& lower_headers);

// The composite checksum of parts whose checksums (base64, algorithm `a`)
// are `parts`, in part order: base64(a(raw1 || raw2 || ...)) + "-N".
std::string CompositeChecksum(ChecksumAlgorithm a, const std::vector<std::string>& parts);

// The header fields an answer carries for `c` (GetObject/HeadObject with
// x-amz-checksum-mode: ENABLED, PutObject, UploadPart).
void AddChecksumHeaders(const ObjectChecksum& c, KeyValues* headers);

class ChecksumCheck {
 public:
  // From the request's headers (lower-case names). No checksum named: an
  // empty check (active() false) that accepts any body, or with
  // `otherwise` one that computes that algorithm and compares nothing (a
  // server giving each new object a checksum).
  static Result<ChecksumCheck> FromHeaders(
      const KeyValues& lower_headers, std::optional<ChecksumAlgorithm> otherwise = std::nullopt);

  bool active() const { return summer_.has_value(); }
  // The algorithm computed, nullopt when inactive.
  std::optional<ChecksumAlgorithm> algorithm() const {
    return summer_ ? std::optional(summer_->algorithm()) : std::nullopt;
  }
  // The full-object checksum a header named with its value (nullopt for
  // one that comes in a trailer, or none).
  std::optional<ObjectChecksum> declared() const;
  void Update(std::string_view decoded);
  // The body has ended; `trailers` are the aws-chunked trailers (empty for
  // a plain body). Returns the verified checksum (nullopt when none was
  // named) or the S3 error.
  Result<std::optional<ObjectChecksum>> Finish(const KeyValues& trailers);

 private:
  std::optional<Checksummer> summer_;
  std::string expected_;  // from the header; "" = from the trailer
  bool compare_ = true;   // false: computed only (nothing was named)
};

}  // namespace ferry::s3
