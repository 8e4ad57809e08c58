#pragma once
// ListObjects / ListObjectsV2 paging over a bucket's sorted key index, as a
// pure function so odd keys, delimiters and page boundaries are table-tested.
//
// Semantics (matching S3):
//  - keys are compared as raw bytes (std::string ordering);
//  - only keys starting with `prefix` and strictly greater than `after` are
//    considered;
//  - with a delimiter, a key whose remainder after the prefix contains the
//    delimiter is rolled up into the common prefix ending at its first
//    occurrence; each common prefix is returned once, and counts as one entry
//    towards max_keys;
//  - common prefixes <= `prefix_after` are skipped: a continuation token (or
//    a V1 marker) that names a common prefix resumes after all its keys.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "s3_types.h"

namespace ferry::s3server {

struct ListParams {
  std::string prefix;
  std::string delimiter;  // "" for a flat listing
  std::string after;      // keys must be > after ("" = from the start)
  std::string prefix_after;  // skip common prefixes <= this ("" = none)
  int max_keys = 1000;       // 0..1000
};

struct ListResult {
  std::vector<ObjectRecord> objects;         // in key order
  std::vector<std::string> common_prefixes;  // in order
  bool truncated = false;
  // The last key or common prefix returned: the V1 NextMarker and the
  // content of the V2 continuation token. "" when nothing was returned.
  std::string last_item;
};

using KeyIndex = std::map<std::string, ObjectRecord>;

ListResult ListKeys(const KeyIndex& index, const ListParams& params);

// Continuation tokens are opaque to clients: base64 of the last item.
std::string EncodeContinuationToken(std::string_view last_item);
// Fails (InvalidArgument) for a token this server did not produce.
Result<std::string> DecodeContinuationToken(std::string_view token);

}  // namespace ferry::s3server
