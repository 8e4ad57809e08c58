#include "s3/sigv4_verify.h"

#include <openssl/crypto.h>

#include <charconv>
#include <ctime>

#include "base/unix_time.h"
#include "s3/sigv2_query.h"

namespace ferry::s3 {
namespace {

ErrorCode CodeForHttp(int http_status) {
  switch (http_status) {
    case 400:
    case 416:
      return ErrorCode::kInvalidArgument;
    case 403:
      return ErrorCode::kAccessDenied;
    case 404:
      return ErrorCode::kNotFound;
    case 409:
      return ErrorCode::kAlreadyExists;
    case 412:
      return ErrorCode::kPreconditionFailed;
    case 501:
      return ErrorCode::kUnsupported;
    case 503:
      return ErrorCode::kThrottled;
    default:
      return http_status >= 500 ? ErrorCode::kServerError : ErrorCode::kInvalidArgument;
  }
}

// The value of `name` in a request's headers or query (nullptr: absent).
const std::string* ValueOf(const KeyValues* values, std::string_view name) {
  return values == nullptr ? nullptr : FindValue(*values, name);
}

const std::string* Header(const ReceivedRequest& req, std::string_view name) {
  return ValueOf(req.headers, name);
}

Status AccessDenied(std::string message) {
  return S3ErrorStatus(403, "AccessDenied", std::move(message));
}

const KeyValues kNoValues;

Status RequestSignatureMismatch() {
  return S3ErrorStatus(403, "SignatureDoesNotMatch",
                       "The request signature we calculated does not match the signature you "
                       "provided. Check your key and signing method.");
}

Status UnknownAccessKey() {
  return S3ErrorStatus(403, "InvalidAccessKeyId",
                       "The AWS Access Key Id you provided does not exist in our records.");
}

// A whole non-negative decimal number; nullopt for anything else.
std::optional<int64_t> ParseNonNegative(std::string_view text) {
  int64_t v = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0) return std::nullopt;
  return v;
}

// The signature over `query` (all of the request's, or a presigned URL's
// but its X-Amz-Signature) and the signed headers.
Status CheckSignature(const ReceivedRequest& req, const std::string& secret,
                      const AuthorizationHeader& auth, std::string_view payload_hash,
                      const KeyValues& query, std::string_view amz_date) {
  RequestToSign r{std::string(req.method), std::string(req.path), query,
                  req.headers ? *req.headers : kNoValues, std::string(payload_hash)};
  std::string canonical = CanonicalRequest(r, auth.signed_headers);
  std::string scope = CredentialScope(auth.date, auth.region, auth.service);
  std::string sts = StringToSign(amz_date, scope, canonical);
  std::string want = ComputeSignature(secret, auth.date, auth.region, auth.service, sts);
  return SameSignature(want, auth.signature) ? Status::Ok() : RequestSignatureMismatch();
}

// The credential's scope: s3, the accepted region, host signed.
Status CheckScope(const AuthorizationHeader& auth, const VerifyKeys& keys) {
  if (auth.service != "s3") {
    return AccessDenied("credential scope names service '" + auth.service + "', not s3");
  }
  if (!keys.signing_region.empty() && auth.region != keys.signing_region) {
    return S3ErrorStatus(
        400, "AuthorizationHeaderMalformed",
        "the region '" + auth.region + "' is wrong; expecting '" + keys.signing_region + "'");
  }
  bool host_signed = false;
  for (const auto& h : auth.signed_headers) host_signed |= (h == "host");
  if (!host_signed) return AccessDenied("SignedHeaders must include host");
  return Status::Ok();
}

Status CheckToken(const std::string* token, const VerifyKeys& keys) {
  if (!keys.session_token.empty() && (token == nullptr || *token != keys.session_token)) {
    return S3ErrorStatus(400, "InvalidToken",
                         "The provided token is malformed or otherwise invalid.");
  }
  return Status::Ok();
}

// An Authorization header's value, parsed, and the secret of its access key.
Result<std::pair<AuthorizationHeader, std::string>> KeyOfAuthorization(std::string_view header,
                                                                       const VerifyKeys& keys) {
  auto parsed = ParseAuthorization(header);
  if (!parsed.ok()) return AccessDenied(parsed.status().message());
  auto it = keys.secrets.find(parsed->access_key_id);
  if (it == keys.secrets.end()) return UnknownAccessKey();
  return std::make_pair(std::move(*parsed), it->second);
}

// The Authorization header, parsed, and the secret of its access key.
Result<std::pair<AuthorizationHeader, std::string>> KeyOf(const ReceivedRequest& req,
                                                          const VerifyKeys& keys) {
  const std::string* header = Header(req, "authorization");
  if (header == nullptr) return AccessDenied("Access Denied");
  return KeyOfAuthorization(*header, keys);
}

const std::string* PresignParam(const ReceivedRequest& req, std::string_view name) {
  return ValueOf(req.query, name);
}

Status PresignError(std::string message) {
  return S3ErrorStatus(400, "AuthorizationQueryParametersError", std::move(message));
}

// A presigned URL (query-string SigV4): its X-Amz-* parameters checked as
// an Authorization header would be, then its age against X-Amz-Expires.
Result<Verified> VerifyPresigned(const ReceivedRequest& req, const VerifyKeys& keys,
                                 std::chrono::system_clock::time_point now) {
  const std::string* algorithm = PresignParam(req, "X-Amz-Algorithm");
  const std::string* credential = PresignParam(req, "X-Amz-Credential");
  const std::string* date = PresignParam(req, "X-Amz-Date");
  const std::string* expires = PresignParam(req, "X-Amz-Expires");
  const std::string* signed_headers = PresignParam(req, "X-Amz-SignedHeaders");
  const std::string* signature = PresignParam(req, "X-Amz-Signature");
  if (!algorithm || !credential || !date || !expires || !signed_headers || !signature) {
    return PresignError(
        "Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, "
        "X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.");
  }
  if (*algorithm != "AWS4-HMAC-SHA256") {
    return PresignError("X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\"");
  }
  const std::optional<int64_t> lifetime = ParseNonNegative(*expires);
  if (!lifetime || *lifetime > 604800) {
    return PresignError("X-Amz-Expires must be a number of seconds from 0 to 604800 (a week)");
  }
  FERRY_ASSIGN_OR_RETURN(auto key, KeyOfAuthorization("AWS4-HMAC-SHA256 Credential=" + *credential +
                                                          ", SignedHeaders=" + *signed_headers +
                                                          ", Signature=" + *signature,
                                                      keys));
  const AuthorizationHeader& auth = key.first;
  FERRY_RETURN_IF_ERROR(CheckToken(PresignParam(req, "X-Amz-Security-Token"), keys));
  FERRY_RETURN_IF_ERROR(CheckScope(auth, keys));
  auto when = ParseAmzDate(*date);
  if (!when || date->substr(0, 8) != auth.date) {
    return PresignError("X-Amz-Date must be in the ISO8601 Long Format and match the credential");
  }
  if (now > *when + std::chrono::seconds(*lifetime)) return AccessDenied("Request has expired");
  if (*when > now + keys.max_skew) return AccessDenied("Request is not valid yet");
  KeyValues signed_query;
  for (const auto& kv : *req.query) {
    if (kv.first != "X-Amz-Signature") signed_query.push_back(kv);
  }
  FERRY_RETURN_IF_ERROR(
      CheckSignature(req, key.second, auth, kUnsignedPayload, signed_query, *date));
  Verified v;
  v.access_key = auth.access_key_id;
  v.presigned = true;
  return v;
}

// A legacy presigned URL (query-string signature version 2, as boto3
// makes at its defaults: sigv2_query.h): the key, Expires (seconds since
// the epoch, at most a week and max_skew ahead), then the signature.
Result<Verified> VerifyPresignedV2(const ReceivedRequest& req, const VerifyKeys& keys,
                                   std::chrono::system_clock::time_point now) {
  const std::string* id = PresignParam(req, "AWSAccessKeyId");
  const std::string* expires = PresignParam(req, "Expires");
  const std::string* signature = PresignParam(req, "Signature");
  if (!id || !expires || !signature) {
    return PresignError(
        "Query-string authentication requires the Signature, Expires and AWSAccessKeyId "
        "parameters");
  }
  const std::optional<int64_t> at = ParseNonNegative(*expires);
  if (!at) return PresignError("Expires must be a time in seconds since the epoch");
  auto it = keys.secrets.find(*id);
  if (it == keys.secrets.end()) return UnknownAccessKey();
  FERRY_RETURN_IF_ERROR(CheckToken(PresignParam(req, "x-amz-security-token"), keys));
  const int64_t now_s =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  if (now_s > *at) return AccessDenied("Request has expired");
  if (*at - now_s > 604800 + keys.max_skew.count()) {
    return PresignError("Expires may be at most a week ahead");
  }
  SigV2Request r;
  r.method = std::string(req.method);
  const std::string* md5 = Header(req, "content-md5");
  const std::string* type = Header(req, "content-type");
  r.content_md5 = md5 ? *md5 : "";
  r.content_type = type ? *type : "";
  r.expires = *expires;
  if (req.headers) r.headers = *req.headers;
  r.query = *req.query;
  // The path as the client encoded it: most encode as S3's UriEncode does;
  // a client that sent it unencoded signed it so.
  for (std::string path : {UriEncode(req.path, false), std::string(req.path)}) {
    r.encoded_path = std::move(path);
    if (SameSignature(SigV2Signature(it->second, SigV2StringToSign(r)), *signature)) {
      Verified v;
      v.access_key = *id;
      v.presigned = true;
      return v;
    }
  }
  return RequestSignatureMismatch();
}

}  // namespace

bool IsLowerHex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool SameSignature(std::string_view want, std::string_view got) {
  return want.size() == got.size() && CRYPTO_memcmp(want.data(), got.data(), want.size()) == 0;
}

Status S3ErrorStatus(int http_status, std::string code, std::string message) {
  Status st(CodeForHttp(http_status), std::move(message));
  st.set_remote(http_status, std::move(code));
  return st;
}

std::optional<std::chrono::system_clock::time_point> ParseAmzDate(std::string_view s) {
  if (s.size() != 16 || s[8] != 'T' || s[15] != 'Z') return std::nullopt;
  for (size_t i = 0; i < 15; ++i) {
    if (i != 8 && (s[i] < '0' || s[i] > '9')) return std::nullopt;
  }
  auto num = [&](size_t pos, size_t len) {
    int v = 0;
    for (size_t i = pos; i < pos + len; ++i) v = v * 10 + (s[i] - '0');
    return v;
  };
  std::tm tm{};
  tm.tm_year = num(0, 4) - 1900;
  tm.tm_mon = num(4, 2) - 1;
  tm.tm_mday = num(6, 2);
  tm.tm_hour = num(9, 2);
  tm.tm_min = num(11, 2);
  tm.tm_sec = num(13, 2);
  if (tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
      tm.tm_sec > 60) {
    return std::nullopt;
  }
  // Clamped: a year past 2262 overflows a nanosecond clock (UBSan, fuzz.s3server).
  return ClampedTimePoint(std::chrono::sys_seconds(std::chrono::seconds(timegm(&tm))));
}

Result<Verified> Verify(const ReceivedRequest& req, const VerifyKeys& keys,
                        std::chrono::system_clock::time_point now) {
  const bool v4 = PresignParam(req, "X-Amz-Algorithm") || PresignParam(req, "X-Amz-Signature") ||
                  PresignParam(req, "X-Amz-Credential");
  if (v4 || PresignParam(req, "AWSAccessKeyId")) {
    if (Header(req, "authorization")) {
      return S3ErrorStatus(400, "InvalidArgument",
                           std::string("Only one auth mechanism allowed; only the ") +
                               (v4 ? "X-Amz-Algorithm" : "AWSAccessKeyId") +
                               " query parameter or the Authorization header should be specified");
    }
    return v4 ? VerifyPresigned(req, keys, now) : VerifyPresignedV2(req, keys, now);
  }
  FERRY_ASSIGN_OR_RETURN(auto key, KeyOf(req, keys));
  const AuthorizationHeader& auth = key.first;
  Verified v;
  v.access_key = auth.access_key_id;
  FERRY_RETURN_IF_ERROR(CheckToken(Header(req, "x-amz-security-token"), keys));
  FERRY_RETURN_IF_ERROR(CheckScope(auth, keys));

  const std::string* amz_date = Header(req, "x-amz-date");
  auto when = amz_date ? ParseAmzDate(*amz_date) : std::nullopt;
  if (!when || amz_date->substr(0, 8) != auth.date) {
    return AccessDenied(
        "x-amz-date is missing, malformed or does not match the credential "
        "scope");
  }
  auto skew = now > *when ? now - *when : *when - now;
  if (skew > keys.max_skew) {
    return S3ErrorStatus(403, "RequestTimeTooSkewed",
                         "The difference between the request time and the current time is too "
                         "large.");
  }

  const std::string* content_sha = Header(req, "x-amz-content-sha256");
  if (content_sha == nullptr) {
    v.deferred = true;
    return v;
  }
  if (*content_sha != kUnsignedPayload && content_sha->rfind("STREAMING-", 0) != 0 &&
      !IsLowerHex64(*content_sha)) {
    return S3ErrorStatus(400, "InvalidArgument",
                         "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-..., or a "
                         "lower-hex SHA-256");
  }
  FERRY_RETURN_IF_ERROR(CheckSignature(req, key.second, auth, *content_sha,
                                       req.query ? *req.query : kNoValues, *amz_date));
  if (content_sha->rfind("STREAMING-AWS4-HMAC-SHA256-PAYLOAD", 0) == 0) {
    v.chain = ChunkChain{SigningKey(key.second, auth.date, auth.region, auth.service), *amz_date,
                         CredentialScope(auth.date, auth.region, auth.service), auth.signature};
  }
  return v;
}

Status VerifyDeferred(const ReceivedRequest& req, const VerifyKeys& keys,
                      std::string_view body_sha256) {
  FERRY_ASSIGN_OR_RETURN(auto key, KeyOf(req, keys));
  const std::string* amz_date = Header(req, "x-amz-date");
  return CheckSignature(req, key.second, key.first, body_sha256, req.query ? *req.query : kNoValues,
                        amz_date ? *amz_date : "");
}

}  // namespace ferry::s3
