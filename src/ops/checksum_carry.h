#pragma once
// How a copy carries a source's flexible checksum (S3's x-amz-checksum-*)
// to its destination, shared by `ferry cp` and `ferry migrate`. A single
// PUT carries the value itself (PutOptions::checksum), which the
// destination compares. A multipart copy cannot: the destination builds
// its checksum from its own parts, whose boundaries need not be the
// source's. So it asks for the same algorithm (each part's checksum sent
// and verified), and compares the whole afterwards where both are
// full-object checksums (a CRC over all the bytes, whatever the parts).

#include <optional>
#include <string_view>

#include "base/status.h"
#include "crypto/checksum.h"
#include "store/object_store.h"

namespace ferry {

// The checksum a multipart copy's upload asks for, from the source's (its
// value empty): the source's algorithm, as a type S3 builds from parts
// (SHA1 and SHA256 composite only, CRC64NVME full-object only, CRC32 and
// CRC32C as the source's). nullopt when the source has none. Pure.
std::optional<ObjectChecksum> MultipartChecksumFor(const std::optional<ObjectChecksum>& source);

// After a multipart copy: kCorruption when the source's and the
// destination's whole-object checksums are both full-object of one
// algorithm and differ; OK otherwise (nothing to compare). Pure.
Status CompareWholeChecksums(const std::optional<ObjectChecksum>& source,
                             const std::optional<ObjectChecksum>& destination);

// CompareWholeChecksums against what `dst` keeps for `key` now (one HEAD,
// made only when the source's checksum is full-object).
Status CheckCarriedChecksum(const std::optional<ObjectChecksum>& source, ObjectStore& dst,
                            std::string_view key);

}  // namespace ferry
