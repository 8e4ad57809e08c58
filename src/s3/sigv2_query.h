#pragma once
// S3's legacy query-string authentication, signature version 2: the
// presigned URLs Debian's boto3 and botocore (1.29) still make at their
// defaults (`?AWSAccessKeyId=...&Expires=...&Signature=...`). What such a
// URL's signature covers, and the signature. Pure; the checks a server
// makes (the key, the expiry, the comparison) are sigv4_verify.h Verify's.
//
//   StringToSign = Method \n Content-MD5 \n Content-Type \n Expires \n
//                  CanonicalizedAmzHeaders CanonicalizedResource
//   Signature    = Base64(HMAC-SHA1(secret, StringToSign))
//
// CanonicalizedAmzHeaders: every x-amz-* header sent, "name:value\n",
// names lower-case and sorted, values trimmed (repeats joined by ",").
// CanonicalizedResource: the path as the URL encodes it, then the
// sub-resources among the query's names (acl, uploadId, partNumber,
// versionId, response-content-type...) sorted, "?name=value&name2", their
// values decoded.

#include <string>
#include <string_view>

#include "s3/sigv4.h"

namespace ferry::s3 {

struct SigV2Request {
  std::string method;
  std::string content_md5;  // the headers' values, "" when absent
  std::string content_type;
  std::string expires;       // the query's Expires, as sent
  KeyValues headers;         // every header (names in any case); x-amz-* are signed
  std::string encoded_path;  // "/bucket/my%20key"
  KeyValues query;           // decoded names and values
};

std::string SigV2StringToSign(const SigV2Request& r);

// Base64 of HMAC-SHA1(secret, string_to_sign).
std::string SigV2Signature(std::string_view secret, std::string_view string_to_sign);

}  // namespace ferry::s3
