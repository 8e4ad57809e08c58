#pragma once
// The S3 documents a gateway answers with, and the two request bodies it
// reads (CompleteMultipartUpload, Delete), pure. Names, order and
// encodings are S3's (what awscli and botocore parse); with
// encoding-type=url, keys and prefixes are URL-encoded as S3 does.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "gateway/list_merge.h"
#include "store/object_store.h"

namespace ferry::gateway {

std::string ErrorXml(std::string_view code, std::string_view message, std::string_view resource);

struct ListParams {
  bool v2 = true;
  std::string bucket, prefix, delimiter;
  std::string start_after;         // V2 start-after (V1: marker)
  std::string continuation_token;  // V2, as received
  int max_keys = 1000;
  bool url_encoding = false;
};
// ListBucketResult for `page`; `next_token` is V2's NextContinuationToken
// (V1's NextMarker is page.next_after).
std::string ListXml(const ListParams& params, const MergedListing& page,
                    std::string_view next_token);

std::string ListBucketsXml(std::string_view bucket);
std::string LocationXml(std::string_view region);
std::string InitiateMultipartXml(std::string_view bucket, std::string_view key,
                                 std::string_view upload_id);
std::string CompleteMultipartXml(std::string_view bucket, std::string_view key,
                                 std::string_view etag,
                                 const std::optional<ObjectChecksum>& checksum = std::nullopt);
std::string CopyObjectXml(std::string_view etag, TimePoint last_modified);
struct DeleteOutcome {
  std::string key;
  std::string error_code;  // "" = deleted
  std::string error_message;
};
std::string DeleteResultXml(const std::vector<DeleteOutcome>& outcomes, bool quiet);

// CompleteMultipartUpload's parts (number and ETag, as listed).
Result<std::vector<PartInfo>> ParseCompleteParts(std::string_view xml);
// ListParts' answer: `parts` (all of the upload's, in order) from after
// `marker`, at most `max_parts`; the upload's checksum algorithm is its
// parts'.
std::string ListPartsXml(std::string_view bucket, std::string_view key, std::string_view upload_id,
                         const std::vector<PartInfo>& parts, int max_parts, int marker);
// GetObjectAttributes' answer with the attributes `wanted` (ETag,
// Checksum, ObjectParts, StorageClass, ObjectSize), at most `max_parts`
// parts after `marker`. A composite checksum goes without its "-N", as S3
// sends it here.
std::string ObjectAttributesXml(const ObjectAttributes& a, const std::vector<std::string>& wanted,
                                int max_parts, int marker);
// Delete's keys and its Quiet flag.
struct DeleteRequest {
  std::vector<std::string> keys;
  bool quiet = false;
};
Result<DeleteRequest> ParseDeleteRequest(std::string_view xml);

// A continuation token for the name a page ended after, and back.
std::string EncodeToken(std::string_view after);
Result<std::string> DecodeToken(std::string_view token);

}  // namespace ferry::gateway
