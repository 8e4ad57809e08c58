#pragma once
// AWS Signature Version 4 for S3, in the Authorization header.
// Pure functions over a request description, so the client (which signs) and
// the test server (which verifies) share one definition, and a table of cases
// is checked against botocore's signer (tests/integration/sigv4_botocore_test).
//
// Canonicalisation follows the S3 flavour: the path is URI-encoded once
// (every byte but A-Z a-z 0-9 - _ . ~ and '/'), never normalised; query names
// and values are encoded with '/' escaped too and sorted; header values are
// trimmed with inner runs of spaces folded to one.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace ferry::s3 {

struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // "" when not using temporary credentials
  bool empty() const { return access_key_id.empty(); }
};

constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";
// SHA-256 of the empty string, the payload hash of bodiless requests.
constexpr std::string_view kEmptyPayloadSha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// The first value named exactly `name` (callers lower-case header names),
// or nullptr.
const std::string* FindValue(const KeyValues& values, std::string_view name);

struct RequestToSign {
  std::string method;
  std::string path;          // decoded, e.g. "/bucket/my key+1"
  KeyValues query;           // decoded names and values, any order
  KeyValues headers;         // names in any case; must include "host"
  std::string payload_hash;  // lower-hex SHA-256 of the body, or kUnsignedPayload
};

// S3 URI encoding of one byte string. With encode_slash false, '/' is kept.
std::string UriEncode(std::string_view in, bool encode_slash);
// Decodes %XX escapes ('+' is kept as '+'). Returns false on a bad escape.
bool UriDecode(std::string_view in, std::string* out);

std::string CanonicalQuery(const KeyValues& query);
// Canonical request over the headers named in `signed_headers` (lower-case,
// sorted, ';'-separated in the result's SignedHeaders line).
std::string CanonicalRequest(const RequestToSign& req,
                             const std::vector<std::string>& signed_headers);
std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request);
// "20240101/us-east-1/s3/aws4_request"
std::string CredentialScope(std::string_view date, std::string_view region,
                            std::string_view service);
// The derived key (kSigning, raw bytes) of a secret for a day, region and
// service; streamed uploads sign each chunk with it (s3/aws_chunked.h).
std::string SigningKey(std::string_view secret, std::string_view date, std::string_view region,
                       std::string_view service);
// Lower-hex signature of string_to_sign under the derived key.
std::string ComputeSignature(std::string_view secret, std::string_view date,
                             std::string_view region, std::string_view service,
                             std::string_view string_to_sign);

// Signs `req` in place: sets x-amz-date, x-amz-content-sha256,
// x-amz-security-token (when the credentials carry one) and Authorization.
// Every header present in req.headers is signed. `amz_date` is
// "YYYYMMDDTHHMMSSZ" (UTC).
void SignRequest(RequestToSign& req, const Credentials& creds, std::string_view region,
                 std::string_view amz_date, std::string_view service = "s3");

// Parsed form of an "AWS4-HMAC-SHA256 Credential=..., SignedHeaders=...,
// Signature=..." header.
struct AuthorizationHeader {
  std::string access_key_id;
  std::string date;  // YYYYMMDD
  std::string region;
  std::string service;
  std::vector<std::string> signed_headers;
  std::string signature;
};
Result<AuthorizationHeader> ParseAuthorization(std::string_view value);

// "20240101T120000Z" for now (UTC).
std::string AmzDateNow();

}  // namespace ferry::s3
