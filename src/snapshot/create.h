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
  // Predict what a Linux boot reads from the image's ext2/3/4 file system
  // (boot_set.h) and store it as the manifest's prefetch order. An image
  // without one gets no order.
  bool predict_boot = true;
};

struct CreateStats {
  uint64_t image_size = 0;
  uint64_t chunks = 0;
  uint64_t zero_chunks = 0;      // all zeros: not stored
  uint64_t uploaded_chunks = 0;  // new to the repository
  uint64_t present_chunks = 0;   // already there (this snapshot or another)
  uint64_t uploaded_bytes = 0;
  uint64_t prefetch_chunks = 0;  // the predicted order's chunks (0: none)
  uint64_t predicted_files = 0;  // the files it was made from
  std::string no_prediction;     // why there is none, when asked for one
};

// Fails with kAlreadyExists when the repository has a snapshot `name`, and
// kInvalidArgument for a bad name, chunk size or unreadable image.
Result<CreateStats> CreateSnapshot(const std::string& image_path, Repository& repo, const std::string& name,
                                   const CreateOptions& options);

}  // namespace ferry::snapshot
