#pragma once
// One request/response exchange, in fixed phases the connection loop
// (server.cc) drives:
//
//   1. Begin()      headers are in: route, authenticate, pick a fault, and
//                   prepare the body pipeline. An early error (bad
//                   signature, no such bucket, injected 500...) is decided
//                   here; the body is then read and discarded so the
//                   connection stays usable.
//   2. OnBody()     raw body bytes, any number of times: aws-chunked
//                   decoding, MD5/SHA-256, into a BlobWriter (uploads) or a
//                   small buffer (XML documents, at most 16 MiB).
//   3. Finish()     integrity checks (Content-MD5, x-amz-content-sha256,
//                   deferred signature), then the handler runs.
//   4. response()   what to send, and how (HttpResponse::delivery).
//   5. Record()     counters, once the server knows how many bytes it sent.
//
// Not thread-safe; one Exchange belongs to one connection coroutine.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "auth.h"
#include "crypto/digest.h"
#include "faults.h"
#include "http_types.h"
#include "router.h"
#include "s3/aws_chunked.h"
#include "s3/flexible_checksum.h"
#include "service.h"

namespace ferry::s3server {

class Exchange {
 public:
  // `content_length` is the request's Content-Length (nullopt if chunked).
  Exchange(Service& service, HttpRequest req, std::optional<uint64_t> content_length);

  void Begin(std::chrono::system_clock::time_point now);
  // Delay to apply before the body is read (fault latency; 0 for admin).
  std::chrono::microseconds latency() const { return latency_; }
  // Fault "reset" on an upload: hard-close the connection once this many
  // request body bytes have been received.
  std::optional<uint64_t> reset_after_body_bytes() const { return reset_after_; }
  void OnBody(std::string_view raw);
  void Finish();

  HttpResponse& response() { return response_; }
  const HttpRequest& request() const { return req_; }
  std::string_view op_name() const { return op_name_; }
  FaultKind fault() const { return fault_; }

  // Adds this exchange to the counters. `bytes_out`: body bytes sent.
  // The client went away before its request body had arrived: recorded
  // as an error (nginx's 499), since nothing was stored.
  void MarkAbandoned() { response_.status = 499; }
  void Record(uint64_t bytes_out);

 private:
  enum class BodyMode { kDiscard, kBuffer, kStream };

  void Fail(const Status& st);
  Status Consume(std::string_view decoded);
  Status CheckIntegrity();
  Status PrepareUpload();
  HttpResponse Handle();
  bool IsHead() const { return req_.method == "HEAD"; }

  Service& service_;
  HttpRequest req_;
  std::optional<uint64_t> content_length_;
  std::string request_id_;
  bool admin_ = false;
  S3Target target_;
  std::string op_name_ = "invalid";
  AuthDecision auth_;
  FaultKind fault_ = FaultKind::kNone;
  std::chrono::microseconds latency_{0};
  std::optional<uint64_t> reset_after_;
  bool drop_after_body_ = false;

  BodyMode mode_ = BodyMode::kBuffer;
  std::optional<s3::AwsChunkedDecoder> chunked_;
  std::optional<s3::ChecksumCheck> checksum_;  // an upload's x-amz-checksum-*
  std::string expected_sha256_;                // lower hex from x-amz-content-sha256, or ""
  std::unique_ptr<StreamingDigest> md5_;
  std::unique_ptr<StreamingDigest> sha256_;
  std::string md5_hex_;                               // of the decoded body, set by CheckIntegrity
  std::optional<s3::ObjectChecksum> checksum_value_;  // set by CheckIntegrity
  std::unique_ptr<BlobWriter> writer_;
  std::string buffer_;
  uint64_t bytes_in_ = 0;
  uint64_t decoded_bytes_ = 0;

  std::optional<HttpResponse> early_;
  HttpResponse response_;
};

}  // namespace ferry::s3server
