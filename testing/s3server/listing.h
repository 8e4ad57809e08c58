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
//
// Servers that get listings wrong are imitated by listing_quirks.h, on top
// of this.

#include <map>
#include <optional>
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
  // Quirk forget-prefixes (listing_quirks.h): a common prefix is returned
  // only if one of the keys considered has no delimiter after it, so one
  // whose keys all sit a level deeper is left out. Default off.
  bool forget_prefixes = false;
};

struct ListResult {
  std::vector<ObjectRecord> objects;         // in key order
  std::vector<std::string> common_prefixes;  // in order
  bool truncated = false;
  // The last key or common prefix returned: the V1 NextMarker. "" when
  // nothing was returned.
  std::string last_item;
  // Where the next page resumes: the content of the V2 continuation token,
  // set when `truncated`. ListKeys sets it to last_item; the walk-order
  // listing (listing_quirks.h) to the key at which last_item was listed.
  std::string resume_after;
};

// One ListObjects request's paging arguments, as the client sent them.
struct ListRequest {
  std::string prefix;
  std::string delimiter;             // "" for a flat listing
  int max_keys = 1000;               // 0..1000
  bool v2 = true;                    // ListObjectsV2; false for V1
  std::string start_after;           // V2 start-after, or the V1 marker ("" = none)
  std::optional<std::string> token;  // V2 only: the decoded continuation token
};

// What `request` means to ListKeys, as S3 defines it: keys <= start_after
// are skipped; a V2 token also skips everything up to the item it names,
// common prefixes included, and so does a V1 marker.
ListParams ByteOrderParams(const ListRequest& request);

using KeyIndex = std::map<std::string, ObjectRecord>;

ListResult ListKeys(const KeyIndex& index, const ListParams& params);

// Continuation tokens are opaque to clients: base64 of the last item.
std::string EncodeContinuationToken(std::string_view last_item);
// Fails (InvalidArgument) for a token this server did not produce.
Result<std::string> DecodeContinuationToken(std::string_view token);

}  // namespace ferry::s3server
