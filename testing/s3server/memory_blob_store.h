#pragma once
// In-memory blobs: a list of shared, immutable string segments. A PUT fills
// one segment reserved to Content-Length (a 1 GiB object is one allocation,
// no re-copying); Concat shares its inputs' segments.

#include "blob.h"

namespace ferry::s3server {

class MemoryBlobStore : public BlobStore {
 public:
  Result<std::unique_ptr<BlobWriter>> NewWriter(uint64_t size_hint) override;
  Result<std::shared_ptr<const Blob>> Concat(
      const std::vector<std::shared_ptr<const Blob>>& parts) override;
};

}  // namespace ferry::s3server
