#include "snapshot/create.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <set>

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

}  // namespace

Result<CreateStats> CreateSnapshot(const std::string& image_path, Repository& repo, const std::string& name,
                                   const CreateOptions& o) {
  if (!ValidSnapshotName(name)) {
    return Status::InvalidArgument("snapshot name '" + name + "': use 1-128 of A-Z a-z 0-9 . _ -");
  }
  if (o.chunk_size < kMinChunkSize || o.chunk_size > kMaxChunkSize || (o.chunk_size & (o.chunk_size - 1))) {
    return Status::InvalidArgument("--chunk-size must be a power of two from 4K to 64M");
  }
  auto existing = repo.GetManifest(name);
  if (existing.ok() || existing.status().code() != ErrorCode::kNotFound) {
    if (existing.ok()) return Status(ErrorCode::kAlreadyExists, "snapshot '" + name + "' already exists");
    if (existing.status().code() != ErrorCode::kCorruption) return existing.status();
    return Status(ErrorCode::kAlreadyExists, "snapshot '" + name + "' already exists (damaged)");
  }
  int fd = ::open(image_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, image_path);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::FromErrno(errno, image_path);
  off_t end = S_ISBLK(st.st_mode) ? ::lseek(fd, 0, SEEK_END) : st.st_size;
  if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
    return Status::InvalidArgument(image_path + ": not a file or block device");
  }
  if (end <= 0) return Status::InvalidArgument(image_path + ": empty image");

  Manifest m;
  m.name = name;
  m.image_size = static_cast<uint64_t>(end);
  m.chunk_size = o.chunk_size;
  m.created = Rfc3339Utc(NowUnixMs());
  m.chunks.resize(m.ChunkCount());
  CreateStats stats;
  stats.image_size = m.image_size;
  stats.chunks = m.chunks.size();
  std::mutex mu;
  std::set<std::string> done;  // hashes stored or found in this run; guarded by mu
  std::atomic<uint64_t> zero{0}, uploaded{0}, present{0}, bytes{0};
  Status st_all = RunParallel(static_cast<int>(m.chunks.size()), o.concurrency, [&](int i) -> Status {
    uint64_t len = m.ChunkLength(static_cast<uint64_t>(i));
    std::string buf(len, '\0');
    size_t got = 0;
    while (got < len) {
      ssize_t n = ::pread(fd, buf.data() + got, len - got, static_cast<off_t>(i * m.chunk_size + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Status::FromErrno(n < 0 ? errno : EIO, image_path + ": read");
      got += static_cast<size_t>(n);
    }
    if (AllZero(buf)) {
      zero++;
      return Status::Ok();  // m.chunks[i] stays ""
    }
    std::string hash = HexLower(Sha256(buf));
    m.chunks[static_cast<size_t>(i)] = hash;  // each task writes only its own slot
    {
      std::lock_guard lock(mu);
      if (!done.insert(hash).second) {
        present++;
        return Status::Ok();
      }
    }
    FERRY_ASSIGN_OR_RETURN(bool has, repo.HasChunk(hash));
    if (has) {
      present++;
      return Status::Ok();
    }
    FERRY_RETURN_IF_ERROR(repo.PutChunk(hash, buf));
    uploaded++;
    bytes += len;
    return Status::Ok();
  });
  if (!st_all.ok()) return st_all;
  FERRY_RETURN_IF_ERROR(repo.PutManifest(m));
  stats.zero_chunks = zero;
  stats.uploaded_chunks = uploaded;
  stats.present_chunks = present;
  stats.uploaded_bytes = bytes;
  return stats;
}

}  // namespace ferry::snapshot
