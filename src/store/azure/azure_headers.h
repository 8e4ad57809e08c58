#pragma once
// How ObjectHeaders travel as Azure blob properties and metadata:
//   on Put Blob / Put Block List / Set Blob Properties: x-ms-blob-content-type,
//     -content-encoding, -content-disposition, -cache-control,
//     -content-language; user metadata as x-ms-meta-NAME.
//   on Get Blob / Get Blob Properties: the plain Content-Type... headers.
// Azure has no Expires property: ObjectHeaders::expires is not stored.
//
// Metadata names must be C# identifiers on Azure (letters, digits, '_', not
// starting with a digit), while S3 user metadata names often hold '-'
// ("owner-id"). Names are escaped reversibly: a-z and 0-9 pass (a leading
// digit excepted), every other byte, '_' included, becomes "_xHH_" (two
// lower-case hex digits): "owner-id" <-> "owner_x2d_id". Decoding turns only
// well-formed escapes back, so names written by other tools ("my_key")
// read unchanged.

#include <string>
#include <string_view>

#include "http/client.h"
#include "store/object_store.h"

namespace ferry::azure {

std::string EncodeMetadataName(std::string_view name);
std::string DecodeMetadataName(std::string_view name);

// Adds the x-ms-blob-* and x-ms-meta-* headers for `h` (empty fields are
// left out; with `all_properties` every x-ms-blob-* header is sent, empty
// ones too, as Set Blob Properties needs to clear the old values).
void AddBlobHeaders(const ObjectHeaders& h, bool all_properties, http::Headers* out);
// Only the x-ms-meta-* headers.
void AddMetadataHeaders(const ObjectHeaders& h, http::Headers* out);

// The info of a Get Blob or Get Blob Properties answer: size (from
// Content-Range when ranged), ETag, Last-Modified, the blob's MD5
// (x-ms-blob-content-md5 on ranged reads, else Content-MD5), headers and
// decoded metadata. etag_is_md5 is false.
ObjectInfo InfoFromBlobResponse(std::string_view key, const http::Response& r);

}  // namespace ferry::azure
