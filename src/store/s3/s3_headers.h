#pragma once
// How ObjectHeaders and what an answer says of an object travel as S3
// headers (Azure's counterpart: azure/azure_headers.h):
//   sent on PUT, on POST ?uploads and on a copy that replaces them:
//     Content-Type, -Encoding, -Disposition, -Language, Cache-Control,
//     Expires (each only when set); user metadata as x-amz-meta-NAME;
//   read from GET and HEAD: the same fields (store/http_get.h), user
//     metadata from x-amz-meta-* and, as GCS's XML API answers even SigV4
//     clients, x-goog-meta-*; the MD5 of GCS's x-goog-hash as md5_hex; the
//     flexible checksum (x-amz-checksum-*, -type), which HEAD and whole
//     GETs ask for with x-amz-checksum-mode: ENABLED.
// An ETag is the body's MD5 only when it is 32 hex digits of an object
// that is not encrypted with SSE-KMS or SSE-C and not a GCS composite.
// Pure; table-tested.

#include <string_view>

#include "http/client.h"
#include "store/object_store.h"

namespace ferry::s3 {

void AddObjectHeaders(const ObjectHeaders& h, http::Headers* out);

// Whether the ETag of the answer `r` is the MD5 of the object's body.
bool EtagIsMd5(const http::Response& r);

// The object a GET or HEAD answer describes.
ObjectInfo InfoFromHeaders(std::string_view key, const http::Response& r);

}  // namespace ferry::s3
