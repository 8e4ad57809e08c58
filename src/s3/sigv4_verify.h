#pragma once
// SigV4 verification of a received request, signed in its Authorization
// header or in its query (a presigned URL: X-Amz-Algorithm, -Credential,
// -Date, -Expires, -SignedHeaders, -Signature; the body unsigned), shared by
// every ferry server that speaks S3: the gateway (`ferry gateway`) and the
// project's test server (testing/s3server). Pure: the request as received,
// the keys, a clock reading in; an S3 error out.
//
// The canonical request is rebuilt from what was received: the decoded path
// re-encoded with UriEncode, the decoded query re-encoded and sorted, and
// exactly the headers named in SignedHeaders (sigv4.h); the signature is
// computed with the secret of the access key named and compared in
// constant time.
//
// Payload hashes: whatever x-amz-content-sha256 says (a hex SHA-256,
// UNSIGNED-PAYLOAD, STREAMING-*) is signed as is; checking a body against a
// hex hash is the caller's job. Without the header the signature covers
// the body's hash, so the caller finishes with VerifyDeferred once it has
// the body.
//
// Errors are Statuses carrying the S3 answer (Status::http_status and
// remote_code): 403 AccessDenied (no or malformed Authorization, a scope
// not for s3, host not signed, a bad x-amz-date), 403 InvalidAccessKeyId,
// 403 SignatureDoesNotMatch, 403 RequestTimeTooSkewed, 400 InvalidToken,
// 400 AuthorizationHeaderMalformed (a region not accepted), 400
// InvalidArgument (a malformed x-amz-content-sha256, or both a header and a
// query signature). A presigned URL: 400 AuthorizationQueryParametersError
// (a parameter missing or malformed, X-Amz-Expires over a week), 403
// AccessDenied "Request has expired" (older than X-Amz-Date + X-Amz-Expires)
// or "Request is not valid yet" (X-Amz-Date beyond max_skew ahead).
//
// A legacy presigned URL (signature version 2: AWSAccessKeyId, Expires,
// Signature; what boto3 makes at its defaults, sigv2_query.h) is taken
// too: 403 AccessDenied "Request has expired" after Expires, 400
// AuthorizationQueryParametersError for a parameter missing or malformed or
// Expires more than a week (and max_skew) ahead, InvalidAccessKeyId and
// SignatureDoesNotMatch as for version 4.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "s3/sigv4.h"

namespace ferry::s3 {

// What a server accepts.
struct VerifyKeys {
  std::map<std::string, std::string> secrets;  // access key id -> secret
  std::string session_token;                   // "" = not required
  std::chrono::seconds max_skew{15 * 60};      // allowed |x-amz-date - now|
  // When set, a signature scoped to another region is refused (as AWS does);
  // "" accepts any region.
  std::string signing_region;
};

// A request as received.
struct ReceivedRequest {
  std::string_view method;
  std::string_view path;               // decoded, as received: "/bucket/my key"
  const KeyValues* query = nullptr;    // decoded names and values
  const KeyValues* headers = nullptr;  // names lower-case
};

// What a signed chunk chain is computed from (s3/aws_chunked.h): the
// request's derived signing key, its x-amz-date and scope, and its own
// signature (the seed).
struct ChunkChain {
  std::string signing_key;  // raw bytes of kSigning
  std::string amz_date;     // "20130524T000000Z"
  std::string scope;        // "20130524/us-east-1/s3/aws4_request"
  std::string seed_signature;
};

struct Verified {
  std::string access_key;
  // No x-amz-content-sha256: finish with VerifyDeferred once the body is read.
  bool deferred = false;
  // STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER]: the chain its chunks follow.
  std::optional<ChunkChain> chain;
  // Signed in its query (a presigned URL): the body is unsigned.
  bool presigned = false;
};

Result<Verified> Verify(const ReceivedRequest& req, const VerifyKeys& keys,
                        std::chrono::system_clock::time_point now);
// Completes a deferred verification with the body's lower-hex SHA-256.
Status VerifyDeferred(const ReceivedRequest& req, const VerifyKeys& keys,
                      std::string_view body_sha256);

// Whether a computed signature equals the one received, compared in
// constant time (request, chunk and trailer signatures alike).
bool SameSignature(std::string_view want, std::string_view got);

// Whether `s` is a SHA-256 as x-amz-content-sha256 carries one: 64
// lower-case hex digits.
bool IsLowerHex64(std::string_view s);

// The Status of an S3 error answer: `http_status` and `code` as its remote
// parts, an ErrorCode that matches the status.
Status S3ErrorStatus(int http_status, std::string code, std::string message);

// "20240101T120000Z" as a time (clamped to the clock's range); nullopt when
// malformed.
std::optional<std::chrono::system_clock::time_point> ParseAmzDate(std::string_view s);

}  // namespace ferry::s3
