#include "snapshot/chunk_store.h"

#include "crypto/digest.h"

namespace ferry::snapshot {
namespace {

bool AllZero(std::string_view b) { return b.find_first_not_of('\0') == std::string_view::npos; }

}  // namespace

Status CheckNewSnapshot(Repository& repo, const std::string& name) {
  if (!ValidSnapshotName(name)) {
    return Status::InvalidArgument("snapshot name '" + name + "': use 1-128 of A-Z a-z 0-9 . _ -");
  }
  auto existing = repo.GetManifest(name);
  if (existing.ok()) return Status(ErrorCode::kAlreadyExists, "snapshot '" + name + "' already exists");
  if (existing.status().code() == ErrorCode::kNotFound) return Status::Ok();
  if (existing.status().code() != ErrorCode::kCorruption) return existing.status();
  return Status(ErrorCode::kAlreadyExists, "snapshot '" + name + "' already exists (damaged)");
}

void ChunkStorer::KnownPresent(const std::string& hash) {
  std::lock_guard lock(mu_);
  done_.insert(hash);
}

bool ChunkStorer::FirstTime(const std::string& hash) {
  std::lock_guard lock(mu_);
  return done_.insert(hash).second;
}

Result<std::string> ChunkStorer::Store(std::string_view bytes) {
  if (AllZero(bytes)) {
    zero_++;
    return std::string();
  }
  std::string hash = HexLower(Sha256(bytes));
  if (!FirstTime(hash)) {
    present_++;
    return hash;
  }
  FERRY_ASSIGN_OR_RETURN(bool has, repo_.HasChunk(hash));
  if (has) {
    present_++;
    return hash;
  }
  FERRY_RETURN_IF_ERROR(repo_.PutChunk(hash, bytes));
  uploaded_++;
  bytes_ += bytes.size();
  return hash;
}

StoreCounts ChunkStorer::counts() const {
  StoreCounts c;
  c.zero = zero_;
  c.uploaded = uploaded_;
  c.present = present_;
  c.uploaded_bytes = bytes_;
  return c;
}

}  // namespace ferry::snapshot
