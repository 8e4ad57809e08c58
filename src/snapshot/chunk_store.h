#pragma once
// Storing a snapshot's chunks, what `snapshot create` (from an image) and
// a snapshot of a running volume (volume/volume_snapshot.h) share: a chunk
// of all zeros is recorded as "" and not stored; a chunk is named by its
// SHA-256 and uploaded only when the repository does not have it (asked
// once per hash per run, or known beforehand: a parent's chunks).
// Thread-safe: one ChunkStorer serves a run's parallel tasks.

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "base/status.h"
#include "snapshot/repository.h"

namespace ferry::snapshot {

// A new snapshot `name` may be made in `repo`: kInvalidArgument for a bad
// name, kAlreadyExists when the repository has one by that name (even a
// damaged one); other errors are the repository's.
Status CheckNewSnapshot(Repository& repo, const std::string& name);

struct StoreCounts {
  uint64_t zero = 0;      // all zeros: not stored
  uint64_t uploaded = 0;  // new to the repository
  uint64_t present = 0;   // the repository had them (or this run stored them already)
  uint64_t uploaded_bytes = 0;
};

class ChunkStorer {
 public:
  explicit ChunkStorer(Repository& repo) : repo_(repo) {}
  // A chunk the repository is known to hold (not asked, not uploaded).
  void KnownPresent(const std::string& hash);
  // Stores `bytes` unless they are zeros or the repository has them; the
  // chunk's manifest entry ("" or its hash).
  Result<std::string> Store(std::string_view bytes);
  StoreCounts counts() const;

 private:
  // False when this run stored, found or was told of the chunk already.
  bool FirstTime(const std::string& hash);

  Repository& repo_;
  std::mutex mu_;
  std::set<std::string> done_;  // guarded by mu_
  std::atomic<uint64_t> zero_{0}, uploaded_{0}, present_{0}, bytes_{0};
};

}  // namespace ferry::snapshot
