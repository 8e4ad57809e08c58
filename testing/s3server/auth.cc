#include "auth.h"

#include "s3/sigv4_verify.h"

namespace ferry::s3server {
namespace {

s3::VerifyKeys KeysOf(const AuthConfig& config) {
  s3::VerifyKeys keys;
  keys.secrets[config.access_key] = config.secret_key;
  keys.session_token = config.session_token;
  keys.max_skew = config.max_skew;
  keys.signing_region = config.signing_region;
  return keys;
}

s3::ReceivedRequest Received(const HttpRequest& req, const S3Target& target) {
  return s3::ReceivedRequest{req.method, target.canonical_path, &target.query, &req.headers};
}

}  // namespace

// The checks are ferry's own (s3/sigv4_verify.h), the ones the gateway runs.
Result<AuthDecision> Authenticator::Verify(const HttpRequest& req, const S3Target& target,
                                           std::chrono::system_clock::time_point now) const {
  AuthDecision decision;
  if (!config_.enabled) return decision;
  FERRY_ASSIGN_OR_RETURN(s3::Verified v, s3::Verify(Received(req, target), KeysOf(config_), now));
  decision.deferred = v.deferred;
  decision.chain = std::move(v.chain);
  return decision;
}

Status Authenticator::VerifyDeferred(const HttpRequest& req, const S3Target& target,
                                     std::string_view body_sha256) const {
  return s3::VerifyDeferred(Received(req, target), KeysOf(config_), body_sha256);
}

}  // namespace ferry::s3server
