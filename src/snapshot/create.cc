#include "snapshot/create.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/file_io.h"
#include "base/unix_time.h"
#include "engine/parallel.h"
#include "snapshot/boot_set.h"
#include "snapshot/chunk_store.h"

namespace ferry::snapshot {
namespace {

// A snapshot `name` may be made in `repo` with options `o`.
Status CheckRequest(Repository& repo, const std::string& name, const CreateOptions& o) {
  const uint64_t c = o.chunk_size;
  bool chunk_ok = c >= kMinChunkSize && c <= kMaxChunkSize && (c & (c - 1)) == 0;
  if (!chunk_ok && ValidSnapshotName(name)) {  // a bad name is reported first
    return Status::InvalidArgument("--chunk-size must be a power of two from 4K to 64M");
  }
  return CheckNewSnapshot(repo, name);
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

// Reads the chunks of one image and stores them, from several threads;
// fills the manifest's slots.
class ChunkWriter {
 public:
  ChunkWriter(const Image& image, const std::string& path, Repository& repo, Manifest& m)
      : image_(image), path_(path), storer_(repo), m_(m) {}

  Status Store(uint64_t i) {
    uint64_t len = m_.ChunkLength(i);
    std::string buf(len, '\0');
    FERRY_ASSIGN_OR_RETURN(
        uint64_t got, PreadUpTo(image_.fd(), buf.data(), len, i * m_.chunk_size, path_ + ": read"));
    if (got != len) return Status::FromErrno(EIO, path_ + ": read");
    FERRY_ASSIGN_OR_RETURN(m_.chunks[i], storer_.Store(buf));  // each task writes only its own slot
    return Status::Ok();
  }

  void Count(CreateStats& stats) const {
    StoreCounts c = storer_.counts();
    stats.zero_chunks = c.zero;
    stats.uploaded_chunks = c.uploaded;
    stats.present_chunks = c.present;
    stats.uploaded_bytes = c.uploaded_bytes;
  }

 private:
  const Image& image_;
  const std::string& path_;
  ChunkStorer storer_;
  Manifest& m_;
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
  CreateStats stats;
  if (o.predict_boot) {
    auto boot = PredictBootSet(image_path);
    if (boot.ok()) {
      // Chunks of zeros are a volume's from the start: nothing to fetch.
      for (uint32_t c : PrefetchOrder(boot->ranges, m.chunk_size, m.chunks.size())) {
        if (!m.chunks[c].empty()) m.prefetch.push_back(c);
      }
      stats.predicted_files = boot->files.size();
    } else {
      stats.no_prediction = boot.status().message();
    }
    stats.prefetch_chunks = m.prefetch.size();
  }
  FERRY_RETURN_IF_ERROR(repo.PutManifest(m));
  stats.image_size = m.image_size;
  stats.chunks = m.chunks.size();
  writer.Count(stats);
  return stats;
}

}  // namespace ferry::snapshot
