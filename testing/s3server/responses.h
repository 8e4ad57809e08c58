#pragma once
// Helpers every handler uses to build responses, and the handler contract.

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "faults.h"
#include "http_types.h"
#include "router.h"
#include "s3_types.h"
#include "service.h"

namespace ferry::s3server {

// Everything a handler sees. Handlers run after authentication and after the
// request body arrived and passed its integrity checks.
struct HandlerContext {
  Service& service;
  const HttpRequest& req;
  const S3Target& target;
  std::string request_id;
  FaultKind fault = FaultKind::kNone;  // kWrongEtag / kComplete200Error reach handlers
  std::string body;                    // buffered body (XML requests)
  std::shared_ptr<const Blob> upload;  // PutObject / UploadPart body
  std::string upload_md5_hex;          // MD5 of `upload`
  // Of `upload`: the one the request named (verified), else the default or
  // the multipart upload's algorithm.
  std::optional<s3::ObjectChecksum> upload_checksum;
};

// S3 error document for `st` (its remote detail gives status and code;
// otherwise 500 InternalError). HEAD responses carry no body.
HttpResponse ErrorResponse(const Status& st, std::string_view resource, std::string_view request_id,
                           bool head);
HttpResponse ErrorResponse(const Status& st, const HandlerContext& ctx);
HttpResponse XmlResponse(std::string xml, int status = 200);

// "\"<etag>\"" — ETags go on the wire quoted.
std::string QuotedEtag(std::string_view etag);
// A well-formed ETag guaranteed to differ from `etag` (fault injection).
std::string WrongEtag(std::string_view etag);
// The ETag a response should carry: `etag`, or a wrong one under kWrongEtag.
std::string ResponseEtag(const HandlerContext& ctx, std::string_view etag);

// Content-Type, Content-Encoding (without aws-chunked), Content-Disposition,
// Cache-Control, Content-Language, Expires and x-amz-meta-* of a request.
ObjectMeta MetaFromHeaders(const HttpRequest& req);

// Encodes a listing value for encoding-type=url ('/' kept, everything else
// outside the unreserved set percent-encoded, so '+' is %2B).
std::string ListingEncode(std::string_view value, bool url_encoding);

}  // namespace ferry::s3server
