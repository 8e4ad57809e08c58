#pragma once
// A body sent as S3's aws-chunked encoding with a trailing checksum
// (x-amz-content-sha256: STREAMING-UNSIGNED-PAYLOAD-TRAILER), what the AWS
// SDKs send by default since 2025: the checksum is computed as the body
// streams and follows it, so an upload whose checksum is known only at its
// end (one relayed as it arrives) still has the server verify and keep it.
//
//   <hex size>\r\n <bytes>\r\n ... 0\r\n x-amz-checksum-<alg>:<base64>\r\n \r\n
//
// Every chunk but the last is kChunk bytes, so the encoded length is known
// from the payload's length before anything is read.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "crypto/checksum.h"
#include "store/stream.h"

namespace ferry {

class AwsChunkedSource : public ByteSource {
 public:
  static constexpr size_t kChunk = 64 << 10;

  // `inner` (the payload, `size` bytes) outlives this.
  AwsChunkedSource(ByteSource& inner, uint64_t size, ChecksumAlgorithm algorithm);

  // The encoded length: the request's Content-Length.
  static uint64_t EncodedLength(uint64_t size, ChecksumAlgorithm algorithm);
  // x-amz-content-sha256 (the signer's), and the request's other headers:
  // aws-chunked before any Content-Encoding the object has, the decoded
  // length, the trailer's name.
  static constexpr std::string_view kPayloadMode = "STREAMING-UNSIGNED-PAYLOAD-TRAILER";
  static void AddHeaders(uint64_t size, ChecksumAlgorithm algorithm,
                         std::vector<std::pair<std::string, std::string>>* headers);

  Result<size_t> Read(char* buf, size_t cap) override;
  Status Rewind() override;
  bool MayWait() const override { return inner_.MayWait(); }

 private:
  Status Refill();  // the next chunk's framing and bytes into out_

  ByteSource& inner_;
  const uint64_t size_;
  const ChecksumAlgorithm algorithm_;
  std::optional<Checksummer> sum_;
  uint64_t sent_ = 0;  // payload bytes framed so far
  bool ended_ = false;
  std::string out_;
  size_t at_ = 0;
};

}  // namespace ferry
