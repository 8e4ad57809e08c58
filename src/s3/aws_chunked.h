#pragma once
// The aws-chunked body of a SigV4 streaming upload, decoded as it arrives,
// shared by every ferry server that takes S3 uploads (the gateway and the
// test server):
//
//   <hex-size>[;chunk-signature=<64 hex>]\r\n <size bytes>\r\n ...
//   0[;chunk-signature=<64 hex>]\r\n
//   [<trailer-name>:<value>\r\n]... [x-amz-trailer-signature:<64 hex>\r\n]
//   \r\n
//
// The payload modes (x-amz-content-sha256) it takes:
//   STREAMING-AWS4-HMAC-SHA256-PAYLOAD          every chunk signed, in a
//                                                chain from the request's
//                                                own (seed) signature
//   STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER  the same, then trailers
//                                                signed after the last chunk
//   STREAMING-UNSIGNED-PAYLOAD-TRAILER           plain chunks, then trailers
//                                                (the AWS SDKs' default for
//                                                streamed bodies since 2025)
//
// Contract: Feed() hands each chunk's bytes to `emit` as they arrive, before
// that chunk's signature can be checked (its signature covers bytes not yet
// seen); so whatever `emit` writes is unverified until Finish() returns OK,
// and a caller stores nothing on any error (Feed, emit or Finish).
//
// Errors carry the S3 answer (Status::remote_code): 403
// SignatureDoesNotMatch (a chunk or trailer signature), 400 IncompleteBody
// (the body ended early, or its decoded size differs from
// x-amz-decoded-content-length), 400 InvalidRequest (malformed framing, a
// trailer not declared in x-amz-trailer or a declared one missing).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "s3/sigv4.h"
#include "s3/sigv4_verify.h"

namespace ferry {
class StreamingDigest;
}  // namespace ferry

namespace ferry::s3 {

// How x-amz-content-sha256 says the body is sent.
enum class PayloadMode {
  kSignedHash,                // a lower-hex SHA-256 of the body
  kUnsigned,                  // UNSIGNED-PAYLOAD
  kStreamingSigned,           // STREAMING-AWS4-HMAC-SHA256-PAYLOAD
  kStreamingSignedTrailer,    // STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER
  kStreamingUnsignedTrailer,  // STREAMING-UNSIGNED-PAYLOAD-TRAILER
};

// nullopt for a value that names no mode (400 InvalidArgument to the client).
std::optional<PayloadMode> ParsePayloadMode(std::string_view x_amz_content_sha256);
bool HasChunkSignatures(PayloadMode m);

// Lower-hex signature of one chunk whose data hashes to `chunk_sha256_hex`,
// following `previous` (the seed or the chunk before).
std::string ChunkSignature(const ChunkChain& chain, std::string_view previous,
                           std::string_view chunk_sha256_hex);
// Lower-hex signature of the trailer block `canonical_trailers` ("name:value\n"
// per trailer, as sent), following the last chunk's signature.
std::string TrailerSignature(const ChunkChain& chain, std::string_view previous,
                             std::string_view canonical_trailers);

struct AwsChunkedOptions {
  PayloadMode mode = PayloadMode::kStreamingUnsignedTrailer;
  // The chain signed chunks are checked against. Without one (a server that
  // does not authenticate, ferry-test-s3 --no-auth) the signatures are
  // required but not checked.
  std::optional<ChunkChain> chain;
  std::optional<uint64_t> decoded_length;      // x-amz-decoded-content-length
  std::vector<std::string> declared_trailers;  // x-amz-trailer, lower case
};

// How a request's body is to be decoded, from its headers (lower-case
// names) and the chain its signature seeded (none without authentication):
// nullopt for a body sent as it is (a signed hash or UNSIGNED-PAYLOAD); 400
// InvalidArgument for an x-amz-content-sha256 naming no mode or an
// x-amz-decoded-content-length that is not a number; 400 InvalidRequest for
// x-amz-trailer on a mode without trailers.
Result<std::optional<AwsChunkedOptions>> StreamingOptions(const KeyValues& lower_headers,
                                                          std::optional<ChunkChain> chain);

// A Content-Encoding without aws-chunked, the transfer framing of a
// streaming upload rather than the object's encoding ("aws-chunked,gzip" ->
// "gzip"): what S3 stores.
std::string WithoutAwsChunked(std::string_view content_encoding);

// Parses x-amz-trailer ("x-amz-checksum-crc32" or a comma-separated list).
std::vector<std::string> ParseTrailerNames(std::string_view x_amz_trailer);

class AwsChunkedDecoder {
 public:
  using Emit = std::function<Status(std::string_view)>;

  explicit AwsChunkedDecoder(AwsChunkedOptions options);
  ~AwsChunkedDecoder();
  AwsChunkedDecoder(const AwsChunkedDecoder&) = delete;
  AwsChunkedDecoder& operator=(const AwsChunkedDecoder&) = delete;

  // Feeds raw body bytes in any pieces; decoded payload goes to `emit`. After
  // an error the decoder must not be fed again.
  Status Feed(std::string_view in, const Emit& emit);
  // The raw body has ended: the final chunk and trailers must have arrived,
  // and the decoded size must equal x-amz-decoded-content-length.
  Status Finish();

  // Trailers received, lower-case names, x-amz-trailer-signature excluded.
  const KeyValues& trailers() const { return trailers_; }
  uint64_t decoded_bytes() const { return decoded_; }
  bool done() const { return state_ == State::kDone; }

 private:
  enum class State { kSizeLine, kData, kDataCr, kDataLf, kTrailer, kDone };
  Status EndSizeLine();
  Status EndChunk();
  Status EndTrailerLine();
  Status EndTrailers();

  AwsChunkedOptions options_;
  State state_ = State::kSizeLine;
  std::string line_;
  uint64_t remaining_ = 0;
  uint64_t decoded_ = 0;
  std::string previous_signature_;               // the chain's last link
  std::string chunk_signature_;                  // claimed for the chunk being read
  std::unique_ptr<StreamingDigest> chunk_hash_;  // of the chunk being read, signed modes
  KeyValues trailers_;
  std::string canonical_trailers_;
  std::string trailer_signature_;
};

}  // namespace ferry::s3
