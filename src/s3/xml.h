#pragma once
// The S3 XML documents ferry reads and writes, as plain structs. Parsing is
// Boost.PropertyTree's XML reader; writing escapes by hand (the documents are
// tiny and fixed). Keys in listings requested with encoding-type=url come
// back percent-encoded ('+' for space, as AWS and botocore do) and are
// decoded here, so callers always see raw keys.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "store/object_store.h"

namespace ferry::s3 {

struct ErrorDocument {
  std::string code;     // "NoSuchKey"
  std::string message;  // human text from the server
};

// Parses <Error><Code>..</Code><Message>..</Message></Error>. Returns false
// when the body is not such a document.
bool ParseError(std::string_view xml, ErrorDocument* out);

Result<ListPage> ParseListObjectsV2(std::string_view xml);

Result<std::string> ParseInitiateMultipartUpload(std::string_view xml);  // UploadId

// CompleteMultipartUploadResult; a 200 whose body is an <Error> becomes that
// error (the server failed after sending its status line).
Result<std::string> ParseCompleteMultipartUpload(std::string_view xml);  // ETag

// GetObjectAttributes' x-amz-object-attributes ("ETag,Checksum,..."): the
// names asked for, or S3's 400 (InvalidArgument for an unknown name,
// InvalidRequest for none).
Result<std::vector<std::string>> ParseObjectAttributeNames(std::string_view header);
// One page of GetObjectAttributes into *out (its parts appended).
Status ParseObjectAttributes(std::string_view xml, ObjectAttributes* out, bool* truncated,
                             int* next_marker);
Result<std::vector<PartInfo>> ParseListParts(std::string_view xml, bool* truncated,
                                             int* next_marker);

// ListMultipartUploadsResult: the uploads on this page; *truncated and the
// markers for the next page (KeyMarker, UploadIdMarker).
Result<std::vector<UploadInfo>> ParseListMultipartUploads(std::string_view xml, bool* truncated,
                                                          std::string* next_key_marker,
                                                          std::string* next_upload_id_marker);

// CopyObjectResult / CopyPartResult: the new ETag.
Result<std::string> ParseCopyResult(std::string_view xml);

std::string BuildCompleteMultipartUpload(const std::vector<PartInfo>& parts);

// XML text escaping of &, <, >, " and '; control characters, which XML 1.0
// cannot carry literally, become numeric references (&#x1;) as S3 emits them.
// Bytes >= 0x80 pass through (keys are UTF-8).
std::string XmlEscape(std::string_view in);

// Strips one pair of surrounding double quotes (ETags arrive quoted).
std::string Unquote(std::string_view etag);

// Parses an ISO 8601 timestamp ("2024-01-02T03:04:05.000Z").
bool ParseIso8601(std::string_view s, TimePoint* out);

}  // namespace ferry::s3
