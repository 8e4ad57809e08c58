#include "auth.h"

#include <openssl/crypto.h>

#include "s3_types.h"
#include "time_format.h"

namespace ferry::s3server {
namespace {

bool IsLowerHex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

Status AccessDenied(std::string message) {
  return S3Error(403, "AccessDenied", std::move(message));
}

std::string AmzDateOf(const HttpRequest& req) {
  if (const std::string* d = req.Header("x-amz-date")) return *d;
  return "";
}

}  // namespace

Status Authenticator::CheckSignature(const HttpRequest& req, const S3Target& target,
                                     const s3::AuthorizationHeader& auth,
                                     std::string_view payload_hash) const {
  s3::RequestToSign r{req.method, target.canonical_path, target.query, req.headers,
                      std::string(payload_hash)};
  std::string canonical = s3::CanonicalRequest(r, auth.signed_headers);
  std::string scope = s3::CredentialScope(auth.date, auth.region, auth.service);
  std::string sts = s3::StringToSign(AmzDateOf(req), scope, canonical);
  std::string want =
      s3::ComputeSignature(config_.secret_key, auth.date, auth.region, auth.service, sts);
  if (want.size() != auth.signature.size() ||
      CRYPTO_memcmp(want.data(), auth.signature.data(), want.size()) != 0) {
    return S3Error(403, "SignatureDoesNotMatch",
                   "The request signature we calculated does not match the signature you "
                   "provided. Check your key and signing method.");
  }
  return Status::Ok();
}

Result<AuthDecision> Authenticator::Verify(const HttpRequest& req, const S3Target& target,
                                           std::chrono::system_clock::time_point now) const {
  AuthDecision decision;
  if (!config_.enabled) return decision;

  const std::string* header = req.Header("authorization");
  if (header == nullptr) return AccessDenied("Access Denied");
  auto parsed = s3::ParseAuthorization(*header);
  if (!parsed.ok()) return AccessDenied(parsed.status().message());
  const s3::AuthorizationHeader& auth = *parsed;

  if (auth.access_key_id != config_.access_key) {
    return S3Error(403, "InvalidAccessKeyId",
                   "The AWS Access Key Id you provided does not exist in our records.");
  }
  if (!config_.session_token.empty() &&
      req.HeaderOr("x-amz-security-token") != config_.session_token) {
    return S3Error(400, "InvalidToken", "The provided token is malformed or otherwise invalid.");
  }
  if (auth.service != "s3") {
    return AccessDenied("credential scope names service '" + auth.service + "', not s3");
  }
  if (!config_.signing_region.empty() && auth.region != config_.signing_region) {
    return S3Error(400, "AuthorizationHeaderMalformed",
                   "the region '" + auth.region + "' is wrong; expecting '" +
                       config_.signing_region + "'");
  }
  bool host_signed = false;
  for (const auto& h : auth.signed_headers) host_signed |= (h == "host");
  if (!host_signed) return AccessDenied("SignedHeaders must include host");

  std::string amz_date = AmzDateOf(req);
  auto when = ParseAmzDate(amz_date);
  if (!when || amz_date.substr(0, 8) != auth.date) {
    return AccessDenied("x-amz-date is missing, malformed or does not match the credential "
                        "scope");
  }
  auto skew = now > *when ? now - *when : *when - now;
  if (skew > config_.max_skew) {
    return S3Error(403, "RequestTimeTooSkewed",
                   "The difference between the request time and the current time is too "
                   "large.");
  }

  const std::string* content_sha = req.Header("x-amz-content-sha256");
  if (content_sha == nullptr) {
    decision.deferred = true;
    return decision;
  }
  if (*content_sha != s3::kUnsignedPayload && content_sha->rfind("STREAMING-", 0) != 0 &&
      !IsLowerHex64(*content_sha)) {
    return S3Error(400, "InvalidArgument",
                   "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-..., or a "
                   "lower-hex SHA-256");
  }
  FERRY_RETURN_IF_ERROR(CheckSignature(req, target, auth, *content_sha));
  return decision;
}

Status Authenticator::VerifyDeferred(const HttpRequest& req, const S3Target& target,
                                     std::string_view body_sha256) const {
  auto parsed = s3::ParseAuthorization(req.HeaderOr("authorization"));
  if (!parsed.ok()) return AccessDenied(parsed.status().message());
  return CheckSignature(req, target, *parsed, body_sha256);
}

}  // namespace ferry::s3server
