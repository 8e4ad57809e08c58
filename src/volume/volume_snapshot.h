#pragma once
// A snapshot of a running volume (how a golden image is updated): the
// volume's content at one instant becomes a new snapshot beside the one it
// was made from, while clients go on reading and writing it.
//
// Begin freezes the volume (Volume::BeginCapture: every write completed
// before is in the snapshot, none after). Upload then builds the manifest
// from the parent's: a chunk clients never wrote keeps the parent's entry
// (content-addressed, so nothing is read or copied); a written chunk is
// read as it was at the instant (copy-on-write keeps it while writes go
// on) and stored through snapshot::ChunkStorer (zeros as "", chunks the
// repository has, the parent's among them, not uploaded). The manifest is
// written last: a snapshot that fails or is cancelled midway leaves no
// manifest (only chunks a later run reuses) and the volume as it was.
// The prefetch order is the parent's.
//
// The repository must be the parent's (the unwritten chunks are named,
// not copied); the caller checks that (snapshot::SameRepository).

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "snapshot/chunk_store.h"
#include "snapshot/repository.h"
#include "volume/volume.h"

namespace ferry::volume {

struct VolumeSnapshotStats {
  uint64_t chunks = 0;           // in the new snapshot
  uint64_t written_chunks = 0;   // captured: changed since the volume was made
  uint64_t parent_chunks = 0;    // the parent's entry, as is
  uint64_t uploaded_chunks = 0;  // of the written, new to the repository
  uint64_t uploaded_bytes = 0;
  uint64_t reused_chunks = 0;    // of the written, ones the repository had
  uint64_t zero_chunks = 0;      // of the written, all zeros (not stored)
  uint64_t spooled_chunks = 0;   // copied aside because a client wrote them meanwhile
};

struct VolumeSnapshotOptions {
  int concurrency = 8;  // chunks in flight (memory: this many chunks)
  // Polled between chunks: true ends the upload with kCancelled. Null: never.
  std::function<bool()> cancelled;
};

class VolumeSnapshot {
 public:
  // Checks that `name` may be made in `repo` (snapshot::CheckNewSnapshot)
  // and freezes `volume`. kAlreadyExists when the name is taken or another
  // snapshot of the volume is being made.
  static Result<std::unique_ptr<VolumeSnapshot>> Begin(std::shared_ptr<Volume> volume, snapshot::Repository* repo,
                                                       const std::string& name);
  ~VolumeSnapshot();  // ends the capture

  // Stores the written chunks and then the manifest; ends the capture
  // either way. Call once.
  Result<VolumeSnapshotStats> Upload(const VolumeSnapshotOptions& options);

  const std::string& name() const { return manifest_.name; }
  uint64_t written_chunks() const { return capture_->chunks().size(); }
  uint64_t taken_chunks() const { return taken_; }  // written chunks stored so far

 private:
  VolumeSnapshot(std::shared_ptr<Volume> volume, snapshot::Repository* repo, std::shared_ptr<ChunkCapture> capture);
  Status UploadChunks(const VolumeSnapshotOptions& options, snapshot::ChunkStorer& storer);

  std::shared_ptr<Volume> volume_;
  snapshot::Repository* repo_;
  std::shared_ptr<ChunkCapture> capture_;
  snapshot::Manifest manifest_;  // the parent's entries, then the written chunks'
  std::atomic<uint64_t> taken_{0};
};

}  // namespace ferry::volume
