#pragma once
// The Blob service's XML documents ferry reads and writes:
//   List Blobs (EnumerationResults): <Blob> entries with <Properties>
//     (Content-Length, Etag, Last-Modified as an HTTP date, Content-MD5 in
//     base64) and <BlobPrefix> entries; <NextMarker> to continue. A <Name
//     Encoded="true"> is percent-encoded (names with characters XML cannot
//     carry) and is decoded here, so callers see raw keys.
//   Get Block List (BlockList): committed and uncommitted blocks, each a
//     base64 <Name> and a <Size>.
//   Put Block List: <BlockList><Latest>id</Latest>...</BlockList>.
// Error documents (<Error><Code>) have S3's shape: s3::ParseError reads them.
// Parsing is Boost.PropertyTree's, through s3/xml_tree.h as for S3.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "store/object_store.h"

namespace ferry::azure {

struct BlobListing {
  // Objects and prefixes in the order the service sent them; each
  // ObjectInfo has key, size, etag (unquoted), last_modified, md5_hex and
  // content_type; etag_is_md5 is false.
  std::vector<ObjectInfo> blobs;
  std::vector<std::string> prefixes;
  std::string next_marker;  // "" on the last page
};

Result<BlobListing> ParseListBlobs(std::string_view xml);

struct Block {
  std::string name;  // decoded block id
  uint64_t size = 0;
  bool committed = false;
};

Result<std::vector<Block>> ParseBlockList(std::string_view xml);

// `ids`: raw (not yet base64) block ids in commit order.
std::string BuildBlockList(const std::vector<std::string>& ids);

// Lower-case hex of a base64 Content-MD5; "" unless it decodes to 16 bytes.
std::string Md5HexFromBase64(std::string_view b64);

}  // namespace ferry::azure
