#pragma once
// SigV4 verification of incoming requests (Authorization header form), by
// ferry's own verifier (src/s3/sigv4_verify.h, which the gateway runs too).
//
// The canonical request is rebuilt from what was received: the decoded path
// re-encoded with s3::UriEncode, the decoded query re-encoded and sorted, and
// exactly the headers named in SignedHeaders; then the signature is computed
// with the configured secret (src/s3/sigv4.h) and compared.
//
// Payload hashes: whatever x-amz-content-sha256 says (a hex SHA-256,
// UNSIGNED-PAYLOAD, STREAMING-*) is signed as is; checking the body against a
// hex hash is the caller's job (exchange.cc), as is aws-chunked decoding
// (s3/aws_chunked.h, whose chunk signatures follow AuthDecision::chain).
// Without the header the signature covers the body's hash, so verification
// waits for the body.

#include <chrono>
#include <string>

#include "base/status.h"
#include "http_types.h"
#include "router.h"
#include "s3/sigv4_verify.h"

namespace ferry::s3server {

struct AuthConfig {
  bool enabled = true;  // false: --no-auth
  std::string access_key = "ferrytest";
  std::string secret_key = "ferrytestsecret";
  std::string session_token;               // "" = not required
  std::chrono::seconds max_skew{15 * 60};  // allowed |x-amz-date - now|
  // When set, a signature scoped to another region is refused (400
  // AuthorizationHeaderMalformed, as AWS does); "" accepts any region.
  std::string signing_region;
};

struct AuthDecision {
  // No x-amz-content-sha256 header: the signature covers the body's hash,
  // so the caller must finish with VerifyDeferred once the body is read.
  bool deferred = false;
  // STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER]: what the chunks are signed by.
  std::optional<s3::ChunkChain> chain;
};

class Authenticator {
 public:
  explicit Authenticator(AuthConfig config) : config_(std::move(config)) {}

  // Checks credentials, date and (unless deferred) the signature. Errors:
  // 403 AccessDenied (no or malformed Authorization), InvalidAccessKeyId,
  // SignatureDoesNotMatch, RequestTimeTooSkewed, 400 InvalidToken.
  Result<AuthDecision> Verify(const HttpRequest& req, const S3Target& target,
                              std::chrono::system_clock::time_point now) const;
  // Completes a kDeferred verification once the body's SHA-256 is known.
  Status VerifyDeferred(const HttpRequest& req, const S3Target& target,
                        std::string_view body_sha256) const;

  const AuthConfig& config() const { return config_; }

 private:
  AuthConfig config_;
};

}  // namespace ferry::s3server
