#pragma once
// Decoder for the aws-chunked content encoding that SigV4 streaming uploads
// use (x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD,
// STREAMING-UNSIGNED-PAYLOAD-TRAILER and relatives):
//
//   <hex-size>[;chunk-signature=<64 hex>]\r\n
//   <size bytes>\r\n
//   ...
//   0[;chunk-signature=...]\r\n
//   [<trailer-name>:<value>\r\n]...
//   \r\n
//
// Incremental: bytes arrive in arbitrary pieces. Chunk signatures and
// trailing checksums are parsed but NOT verified (documented limitation of
// the test server); the seed signature over the headers is verified as usual.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace ferry::s3server {

class AwsChunkedDecoder {
 public:
  using Emit = std::function<Status(std::string_view)>;

  // Feeds raw body bytes; decoded payload is passed to `emit` (which may be
  // called several times). An error from `emit` or malformed framing is
  // returned and the decoder must not be fed again.
  Status Feed(std::string_view in, const Emit& emit);
  // True once the final chunk and the trailer section have been read.
  bool done() const { return state_ == State::kDone; }
  // Trailer lines seen ("x-amz-checksum-crc32:AAAA=="), for diagnostics.
  const std::string& trailers() const { return trailers_; }

 private:
  enum class State { kSizeLine, kData, kDataCr, kDataLf, kTrailer, kDone };
  Status EndSizeLine();

  State state_ = State::kSizeLine;
  std::string line_;
  uint64_t remaining_ = 0;
  std::string trailers_;
};

}  // namespace ferry::s3server
