#pragma once
// The frozen content of a volume's chunks while a snapshot of it is made
// (copy-on-write, as LVM's and dm-snapshot's origin writes do): at the
// freeze, a set of chunks is frozen; until the snapshot has taken a
// frozen chunk, a write to it first copies the chunk's old bytes from the
// data file to a spool file (at the chunk's own offset in that sparse,
// unlinked file in the volume's directory), and the snapshot reads them
// from there. A chunk the snapshot took before anyone wrote it is read
// from the data file, never copied. The spool's range of a chunk is freed
// once taken, so the spool holds at most the chunks written during the
// upload and not yet taken.
//
// Each frozen chunk moves through:
//   kFrozen   its frozen bytes are in the data file
//   kCopying  a writer copies them to the spool (writers of it wait)
//   kReading  the snapshot reads them from the data file (writers wait)
//   kSpooled  they are in the spool
//   kTaken    the snapshot has them; writes pass
// Reads of the volume never wait here. Thread-safe.

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"

namespace ferry::volume {

class ChunkCapture {
 public:
  // `data_fd`: the volume's data file (not owned; it must outlive this);
  // `frozen`: which chunks to capture; `spool_dir`: where the spool goes.
  static Result<std::unique_ptr<ChunkCapture>> Create(int data_fd, uint64_t volume_size, uint64_t chunk_size,
                                                      std::vector<bool> frozen, const std::string& spool_dir);
  ~ChunkCapture();

  // The frozen chunks, in order.
  const std::vector<uint64_t>& chunks() const { return chunks_; }
  // Called by a writer, before it changes chunk `i` of the data file: a
  // frozen chunk not yet taken is copied to the spool first. An error
  // means the copy failed: the write must not go on.
  Status BeforeWrite(uint64_t i);
  // The frozen bytes of chunk `i` (kInvalidArgument if not frozen; each
  // chunk is taken once). Afterwards writes to it pass freely.
  Result<std::string> Take(uint64_t i);
  // Chunks copied to the spool by writers so far (tests, stats).
  uint64_t spooled() const;

 private:
  enum class State : uint8_t { kNone, kFrozen, kCopying, kReading, kSpooled, kTaken };
  ChunkCapture(int data_fd, int spool_fd, uint64_t size, uint64_t chunk_size)
      : data_fd_(data_fd), spool_fd_(spool_fd), size_(size), chunk_size_(chunk_size) {}
  uint64_t Length(uint64_t i) const { return std::min(chunk_size_, size_ - i * chunk_size_); }
  // Ends a copy or read of chunk `i` in state `next`, waking its waiters.
  void Finish(uint64_t i, State next);

  const int data_fd_, spool_fd_;
  const uint64_t size_, chunk_size_;
  std::vector<uint64_t> chunks_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<State> state_;  // guarded by mu_
  uint64_t spooled_ = 0;      // guarded by mu_
};

}  // namespace ferry::volume
