#pragma once
// What a blob's block list (Get Block List, azure_xml.h) says of ferry's
// multipart uploads to it (upload and block ids: upload_ids.h): one
// upload's parts, marker, tombstone and committed blocks; whether it is
// open; whether a Complete's part list fits it or was already committed;
// which uploads are in progress. Blocks of other tools are ignored. Pure;
// table-tested.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "store/azure/azure_xml.h"
#include "store/object_store.h"

namespace ferry::azure {

struct UploadBlocks {
  std::map<int, uint64_t> parts;  // uncommitted parts: number -> size
  std::vector<int> committed;     // part numbers, in commit order
  bool marker = false;            // CreateMultipart's block
  bool tombstone = false;         // AbortMultipart's block
  // Created (a marker or a part) and not aborted.
  bool Open() const { return !tombstone && (marker || !parts.empty()); }
};

// The blocks of the upload with `nonce`.
UploadBlocks BlocksOf(const std::vector<Block>& blocks, std::string_view nonce);

// Whether `u`'s committed blocks are `parts`, in order: a Complete whose
// answer was lost, retried.
bool CommittedAs(const UploadBlocks& u, const std::vector<PartInfo>& parts);

// Checks a Complete's part list against the uploaded blocks: not empty,
// ascending, each part uploaded, with its size unless that is given as 0.
// kInvalidArgument naming the first part that does not fit.
Status CheckParts(const std::vector<PartInfo>& parts, const UploadBlocks& u);

// The nonces of the open uploads among `blocks`, in byte order.
std::vector<std::string> OpenUploads(const std::vector<Block>& blocks);

}  // namespace ferry::azure
