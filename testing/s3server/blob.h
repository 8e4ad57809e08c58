#pragma once
// Immutable object bodies and the stores that make them.
//
// A Blob is written once through a BlobWriter and never changes afterwards,
// so readers (a GET in flight) keep a shared_ptr and need no lock while an
// overwrite or delete of the same key proceeds. Objects, parts and copies may
// share one Blob. The memory store keeps bodies as a list of segments, so a
// completed multipart upload references its parts' bytes instead of copying
// them; the directory store keeps one file per blob.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ferry::s3server {

class Blob {
 public:
  virtual ~Blob() = default;
  virtual uint64_t size() const = 0;
  // Returns between 1 and `max` bytes starting at `offset` (< size()). The
  // view points either into the blob itself (memory) or into `*scratch`; it
  // stays valid while the blob and `*scratch` are alive and unchanged.
  virtual Result<std::string_view> ReadAt(uint64_t offset, size_t max,
                                          std::string* scratch) const = 0;
};

class BlobWriter {
 public:
  virtual ~BlobWriter() = default;  // discards the data unless Finish() succeeded
  virtual Status Append(std::string_view data) = 0;
  // Seals the blob. The writer must not be used afterwards.
  virtual Result<std::shared_ptr<const Blob>> Finish() = 0;
};

class BlobStore {
 public:
  virtual ~BlobStore() = default;
  // `size_hint` is the expected size (0 when unknown), used to pre-allocate.
  virtual Result<std::unique_ptr<BlobWriter>> NewWriter(uint64_t size_hint) = 0;
  // A blob whose bytes are the concatenation of `parts`. The default copies
  // through a writer; stores that can share bytes override it.
  virtual Result<std::shared_ptr<const Blob>> Concat(
      const std::vector<std::shared_ptr<const Blob>>& parts);
  // Called once by the owner before dropping its blobs at shutdown: blobs
  // released after this keep their backing data (the directory store then
  // keeps files that the persisted catalogue still references).
  virtual void Close() {}
};

// Reads all of `blob` into a string (tests and small bodies only).
Result<std::string> ReadAll(const Blob& blob);

}  // namespace ferry::s3server
