#include "volume/volume_snapshot.h"

#include "base/cancel.h"
#include "base/unix_time.h"
#include "engine/parallel.h"

namespace ferry::volume {

VolumeSnapshot::VolumeSnapshot(std::shared_ptr<Volume> volume, snapshot::Repository* repo,
                               std::shared_ptr<ChunkCapture> capture)
    : volume_(std::move(volume)), repo_(repo), capture_(std::move(capture)) {}

VolumeSnapshot::~VolumeSnapshot() { volume_->EndCapture(capture_.get()); }

Result<std::unique_ptr<VolumeSnapshot>> VolumeSnapshot::Begin(std::shared_ptr<Volume> volume,
                                                              snapshot::Repository* repo, const std::string& name) {
  FERRY_RETURN_IF_ERROR(snapshot::CheckNewSnapshot(*repo, name));
  FERRY_ASSIGN_OR_RETURN(std::shared_ptr<ChunkCapture> capture, volume->BeginCapture());
  std::unique_ptr<VolumeSnapshot> s(new VolumeSnapshot(volume, repo, std::move(capture)));
  // The new manifest: the volume's size and the parent's chunks (none past
  // the parent's end: those read as zeros unless written).
  const snapshot::Manifest& parent = volume->manifest();
  snapshot::Manifest& m = s->manifest_;
  m.name = name;
  m.image_size = volume->size();
  m.chunk_size = parent.chunk_size;
  m.created = Rfc3339Utc(NowUnixMs());  // the instant frozen
  m.chunks = parent.chunks;
  m.chunks.resize(m.ChunkCount());
  m.prefetch = parent.prefetch;
  return s;
}

Status VolumeSnapshot::UploadChunks(const VolumeSnapshotOptions& o, snapshot::ChunkStorer& storer) {
  const auto& written = capture_->chunks();
  return RunParallel(static_cast<int>(written.size()), std::max(1, o.concurrency), [&](int k) -> Status {
    if (CancelRequested() || (o.cancelled && o.cancelled())) return CancelledStatus();
    uint64_t i = written[static_cast<size_t>(k)];
    FERRY_ASSIGN_OR_RETURN(std::string bytes, capture_->Take(i));
    FERRY_ASSIGN_OR_RETURN(manifest_.chunks[i], storer.Store(bytes));  // each task writes its own slot
    taken_++;
    return Status::Ok();
  });
}

Result<VolumeSnapshotStats> VolumeSnapshot::Upload(const VolumeSnapshotOptions& o) {
  snapshot::ChunkStorer storer(*repo_);
  // The parent's manifest is in this repository, so all its chunks are.
  for (const auto& hash : volume_->manifest().chunks) {
    if (!hash.empty()) storer.KnownPresent(hash);
  }
  Status st = UploadChunks(o, storer);
  VolumeSnapshotStats stats;
  stats.spooled_chunks = capture_->spooled();
  volume_->EndCapture(capture_.get());  // writes pass freely from here, whatever happens next
  FERRY_RETURN_IF_ERROR(st);
  // Another snapshot by this name may have appeared meanwhile: checked
  // again just before the manifest, which is written last.
  FERRY_RETURN_IF_ERROR(snapshot::CheckNewSnapshot(*repo_, manifest_.name));
  FERRY_RETURN_IF_ERROR(repo_->PutManifest(manifest_));
  snapshot::StoreCounts c = storer.counts();
  stats.chunks = manifest_.chunks.size();
  stats.written_chunks = capture_->chunks().size();
  stats.parent_chunks = stats.chunks - stats.written_chunks;
  stats.uploaded_chunks = c.uploaded;
  stats.uploaded_bytes = c.uploaded_bytes;
  stats.reused_chunks = c.present;
  stats.zero_chunks = c.zero;
  return stats;
}

}  // namespace ferry::volume
