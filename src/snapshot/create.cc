#include "snapshot/create.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <set>

#include "base/file_io.h"
#include "base/unix_time.h"
#include "crypto/digest.h"
#include "engine/parallel.h"

namespace ferry::snapshot {
namespace {

bool AllZero(std::string_view b) {
  for (char c : b) {
    if (c != 0) return false;
  }
  return true;
}

// A snapshot `name` may be made in `repo` with options `o`.
Status CheckRequest(Repository& repo, const std::string& name, const CreateOptions& o) {
  if (!ValidSnapshotName(name)) {
    return Status::InvalidArgument("snapshot name '" + name + "': use 1-128 of A-Z a-z 0-9 . _ -");
  }
  if (o.chunk_size < kMinChunkSize || o.chunk_size > kMaxChunkSize || (o.chunk_size & (o.chunk_size - 1))) {
    return Status::InvalidArgument("--chunk-size must be a power of two from 4K to 64M");
  }
  auto existing = repo.GetManifest(name);
  if (existing.ok()) {
    return Status(ErrorCode::kAlreadyExists, "snapshot '" + name + "' already exists");
  }
  if (existing.status().code() == ErrorCode::kNotFound) return Status::Ok();
  if (existing.status().code() != ErrorCode::kCorruption) return existing.status();
  return Status(ErrorCode::kAlreadyExists, "snapshot '" + name + "' already exists (damaged)");
}

// The image, open for reading: a regular file or a block device, not empty.
class Image {
 public:
  Image() = default;
  Image(const Image&) = delete;
  Image& operator=(const Image&) = delete;
  ~Image() {
    if (fd_ >= 0) ::close(fd_);
  }
  Status Open(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return Status::FromErrno(errno, path);
    struct stat st;
    if (::fstat(fd_, &st) != 0) return Status::FromErrno(errno, path);
    off_t end = S_ISBLK(st.st_mode) ? ::lseek(fd_, 0, SEEK_END) : st.st_size;
    if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
      return Status::InvalidArgument(path + ": not a file or block device");
    }
    if (end <= 0) return Status::InvalidArgument(path + ": empty image");
    size_ = static_cast<uint64_t>(end);
    return Status::Ok();
  }
  int fd() const { return fd_; }
  uint64_t size() const { return size_; }

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Reads, hashes and stores the chunks of one image, each once, from
// several threads; fills the manifest's slots and counts what it did.
class ChunkWriter {
 public:
  ChunkWriter(const Image& image, const std::string& path, Repository& repo, Manifest& m)
      : image_(image), path_(path), repo_(repo), m_(m) {}

  Status Store(uint64_t i) {
    uint64_t len = m_.ChunkLength(i);
    std::string buf(len, '\0');
    FERRY_ASSIGN_OR_RETURN(
        uint64_t got, PreadUpTo(image_.fd(), buf.data(), len, i * m_.chunk_size, path_ + ": read"));
    if (got != len) return Status::FromErrno(EIO, path_ + ": read");
    if (AllZero(buf)) {
      zero_++;
      return Status::Ok();  // m.chunks[i] stays ""
    }
    std::string hash = HexLower(Sha256(buf));
    m_.chunks[i] = hash;  // each task writes only its own slot
    if (!FirstTime(hash)) {
      present_++;
      return Status::Ok();
    }
    FERRY_ASSIGN_OR_RETURN(bool has, repo_.HasChunk(hash));
    if (has) {
      present_++;
      return Status::Ok();
    }
    FERRY_RETURN_IF_ERROR(repo_.PutChunk(hash, buf));
    uploaded_++;
    bytes_ += len;
    return Status::Ok();
  }

  void Count(CreateStats& stats) const {
    stats.zero_chunks = zero_;
    stats.uploaded_chunks = uploaded_;
    stats.present_chunks = present_;
    stats.uploaded_bytes = bytes_;
  }

 private:
  // False when this run stored or found the chunk already.
  bool FirstTime(const std::string& hash) {
    std::lock_guard lock(mu_);
    return done_.insert(hash).second;
  }

  const Image& image_;
  const std::string& path_;
  Repository& repo_;
  Manifest& m_;
  std::mutex mu_;
  std::set<std::string> done_;  // hashes stored or found in this run; guarded by mu_
  std::atomic<uint64_t> zero_{0}, uploaded_{0}, present_{0}, bytes_{0};
};

}  // namespace

Result<CreateStats> CreateSnapshot(const std::string& image_path, Repository& repo,
                                   const std::string& name, const CreateOptions& o) {
  FERRY_RETURN_IF_ERROR(CheckRequest(repo, name, o));
  Image image;
  FERRY_RETURN_IF_ERROR(image.Open(image_path));
  Manifest m;
  m.name = name;
  m.image_size = image.size();
  m.chunk_size = o.chunk_size;
  m.created = Rfc3339Utc(NowUnixMs());
  m.chunks.resize(m.ChunkCount());
  ChunkWriter writer(image, image_path, repo, m);
  FERRY_RETURN_IF_ERROR(RunParallel(static_cast<int>(m.chunks.size()), o.concurrency,
                                    [&](int i) { return writer.Store(static_cast<uint64_t>(i)); }));
  FERRY_RETURN_IF_ERROR(repo.PutManifest(m));
  CreateStats stats;
  stats.image_size = m.image_size;
  stats.chunks = m.chunks.size();
  writer.Count(stats);
  return stats;
}

}  // namespace ferry::snapshot
