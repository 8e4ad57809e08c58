#pragma once
// Azure Storage Shared Key authorization (the Blob service, versions
// 2009-09-19 and later), as pure functions:
//
//   StringToSign = VERB \n Content-Encoding \n Content-Language \n
//     Content-Length (empty when 0) \n Content-MD5 \n Content-Type \n Date \n
//     If-Modified-Since \n If-Match \n If-None-Match \n If-Unmodified-Since \n
//     Range \n CanonicalizedHeaders CanonicalizedResource
//   CanonicalizedHeaders: every x-ms-* header, name lower-cased, sorted by
//     name, "name:value\n" with the value's runs of blanks folded to one.
//   CanonicalizedResource: "/" ACCOUNT PATH (the path as sent, so for a
//     path-style endpoint such as Azurite's it starts with the account
//     again), then "\nname:value" per query parameter, names lower-cased and
//     sorted, several values of one name sorted and joined with ','.
//   Authorization: "SharedKey ACCOUNT:" base64(HMAC-SHA256(key, StringToSign))
//     where key is the base64-decoded account key.

#include <string>
#include <string_view>

#include "http/headers.h"
#include "s3/sigv4.h"

namespace ferry::azure {

struct SharedKeyRequest {
  std::string method;   // "GET"
  std::string path;     // as sent on the wire: percent-encoded, e.g. "/acct/c/a%20b"
  s3::KeyValues query;  // decoded names and values, any order
  http::Headers headers;  // names in any case; x-ms-date and x-ms-version included
};

std::string CanonicalizedHeaders(const http::Headers& headers);
std::string CanonicalizedResource(std::string_view account, std::string_view path,
                                  const s3::KeyValues& query);
std::string StringToSign(std::string_view account, const SharedKeyRequest& req);

// The Authorization header's value. `raw_key` is the decoded account key.
std::string SharedKeyAuthorization(std::string_view account, std::string_view raw_key,
                                   const SharedKeyRequest& req);

}  // namespace ferry::azure
