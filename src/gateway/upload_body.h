#pragma once
// The payload of an upload (PutObject, UploadPart) as a client sends it,
// checked while it streams: an aws-chunked body decoded (chunk and trailer
// signatures verified), its x-amz-decoded-content-length, the SHA-256 its
// signature covered, and the flexible checksum it names in a header or a
// trailer.
//
// Contract: nothing unverified is ever complete. The last byte of the
// payload is held back until the raw body has ended and every check has
// passed; a check that fails fails that last Read instead. A store that
// writes from this source (an S3 PUT of `size()` bytes, a local file
// renamed only when whole) therefore never completes a bad object.
//
// Not thread-safe: one reader.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "crypto/checksum.h"
#include "http/request_body.h"
#include "s3/aws_chunked.h"
#include "s3/flexible_checksum.h"
#include "store/stream.h"

namespace ferry {
class StreamingDigest;
}

namespace ferry::gateway {

// What a request's header says about its body.
struct UploadPlan {
  std::optional<s3::AwsChunkedOptions> streaming;  // aws-chunked, else as sent
  s3::ChecksumCheck check;
  std::string signed_sha256;  // lower hex the signature covers, "" when none
  // The payload's length: x-amz-decoded-content-length, else the raw
  // body's; nullopt when neither is known (a chunked body with no length).
  std::optional<uint64_t> size;
};

// `lower_headers`: the request's, names lower case; `chain`: the one its
// signature seeded (s3::Verified::chain); `raw_length`: the body's
// Content-Length when known. The S3 errors of a header that names no
// payload mode or a malformed length or checksum.
Result<UploadPlan> PlanUpload(const s3::KeyValues& lower_headers,
                              std::optional<s3::ChunkChain> chain,
                              std::optional<uint64_t> raw_length);

class UploadBody : public ByteSource {
 public:
  // `raw` (the body as received, framing included) outlives this. With
  // `hash_payload`, sha256() is computed even when nothing was signed (a
  // signature that waits for the body's hash).
  UploadBody(ByteSource* raw, UploadPlan plan, bool hash_payload = false);
  ~UploadBody() override;

  std::optional<uint64_t> size() const { return size_; }
  Result<size_t> Read(char* buf, size_t cap) override;
  Status Rewind() override { return Status::Unsupported("an upload's body is read once"); }
  bool MayWait() const override { return raw_->MayWait(); }
  // The rest, at most `limit` bytes (400 EntityTooLarge past it).
  Result<std::string> ReadAll(uint64_t limit);

  // After the end: the checksum verified (nullopt when none was named).
  const std::optional<ObjectChecksum>& checksum() const { return checksum_; }
  // The checksum a header named with its value (known before the body).
  std::optional<ObjectChecksum> declared_checksum() const { return plan_.check.declared(); }
  // The algorithm of the checksum named (in a header or a trailer).
  std::optional<ChecksumAlgorithm> checksum_algorithm() const { return plan_.check.algorithm(); }
  // The client's error that failed a Read (OK when none did), so a caller
  // answers it rather than what a store made of it.
  const Status& failure() const { return failure_; }
  // The SHA-256 of the payload, lower hex, once it has ended.
  const std::string& sha256() const { return sha256_hex_; }

 private:
  Status Pull();    // reads one piece of the raw body
  Status Finish();  // the raw body has ended: every check
  Status Fail(Status st);

  ByteSource* raw_;
  UploadPlan plan_;
  std::optional<uint64_t> size_;
  std::unique_ptr<s3::AwsChunkedDecoder> decoder_;
  std::unique_ptr<StreamingDigest> sha256_;
  std::string pending_;  // decoded, not yet read
  size_t at_ = 0;
  uint64_t decoded_ = 0;
  bool raw_done_ = false;
  std::optional<ObjectChecksum> checksum_;
  std::string sha256_hex_;
  Status failure_;
};

// A request body still arriving (http::Server's stream) as a source.
class RequestBodySource : public ByteSource {
 public:
  explicit RequestBodySource(http::RequestBody* body) : body_(body) {}
  Result<size_t> Read(char* buf, size_t cap) override;
  Status Rewind() override { return Status::Unsupported("a request body is read once"); }
  bool MayWait() const override { return true; }  // at the client's pace

 private:
  http::RequestBody* body_;
};

}  // namespace ferry::gateway
