#pragma once
// Multipart uploads on Azure, where a "multipart upload" is a set of
// uncommitted blocks that Put Block List commits. Azure keeps no upload
// object, so ferry's upload id carries what S3 would keep for one:
//
//   upload id = NONCE [ "." base64url(JSON of the object's headers) ]
//   NONCE     = 12 hex digits of the create time (Unix ms) + 12 random hex
//   block id  = base64("ferry-" NONCE "-" PPPPP), PPPPP the part number in
//               five digits: 36 bytes, so every block of every ferry upload
//               has the same id length, as Azure requires within a blob.
//
// Part 0 is a one-byte marker block written by CreateMultipart, so an upload
// without parts is visible to ListMultipartUploads; part 99999 is the
// tombstone AbortMultipart writes (Azure cannot delete uncommitted blocks;
// they expire after 7 days or go when the blob is next committed). Neither
// is ever committed. Pure; table-tested.

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "store/object_store.h"

namespace ferry::azure {

inline constexpr int kMarkerPart = 0;
inline constexpr int kTombstonePart = 99999;

struct UploadId {
  std::string nonce;  // 24 hex digits
  ObjectHeaders headers;
};

std::string NewUploadNonce(TimePoint now, uint64_t random);
std::string FormatUploadId(const UploadId& id);
// kNotFound ("no such multipart upload") for an id ferry did not make.
Result<UploadId> ParseUploadId(std::string_view text);
// The create time a nonce records.
TimePoint NonceTime(std::string_view nonce);

std::string BlockId(std::string_view nonce, int part);  // raw, before base64
// False for ids that are not ferry's (other tools' blocks).
bool ParseBlockId(std::string_view raw, std::string* nonce, int* part);

}  // namespace ferry::azure
