#pragma once
// `ferry snapshot create`: a raw disk image becomes a manifest plus the
// chunks the repository does not have yet. Chunks are read, hashed and
// uploaded in parallel; all-zero chunks are recorded, not stored; the
// manifest is written last, so a snapshot is never visible half-made (a
// run that stops early leaves only chunks, which a later run reuses).

#include <cstdint>
#include <string>

#include "base/status.h"
#include "snapshot/repository.h"

namespace ferry::snapshot {

struct CreateOptions {
  uint64_t chunk_size = 1 << 20;  // a power of two, 4 KiB..64 MiB
  int concurrency = 16;           // chunks in flight (memory: this many chunks)
};

struct CreateStats {
  uint64_t image_size = 0;
  uint64_t chunks = 0;
  uint64_t zero_chunks = 0;      // all zeros: not stored
  uint64_t uploaded_chunks = 0;  // new to the repository
  uint64_t present_chunks = 0;   // already there (this snapshot or another)
  uint64_t uploaded_bytes = 0;
};

// Fails with kAlreadyExists when the repository has a snapshot `name`, and
// kInvalidArgument for a bad name, chunk size or unreadable image.
Result<CreateStats> CreateSnapshot(const std::string& image_path, Repository& repo, const std::string& name,
                                   const CreateOptions& options);

}  // namespace ferry::snapshot
