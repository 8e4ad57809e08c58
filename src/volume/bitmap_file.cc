#include "volume/bitmap_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/atomic_file.h"
#include "base/file_io.h"

namespace ferry::volume {
namespace {

constexpr uint64_t kHeader = 16;

std::string Encode(std::string_view magic, const std::vector<bool>& bits) {
  std::string file(kHeader + (bits.size() + 7) / 8, '\0');
  std::memcpy(file.data(), magic.data(), std::min<size_t>(8, magic.size()));
  for (int b = 0; b < 8; ++b) file[8 + b] = static_cast<char>((bits.size() >> (8 * b)) & 0xff);
  for (uint64_t i = 0; i < bits.size(); ++i) {
    if (bits[i]) file[kHeader + i / 8] = static_cast<char>(file[kHeader + i / 8] | (1 << (i % 8)));
  }
  return file;
}

Result<std::vector<bool>> Decode(const std::string& file, std::string_view magic, uint64_t chunks,
                                 const std::string& path) {
  uint64_t n = 0;
  for (int b = 0; b < 8 && file.size() >= kHeader; ++b) {
    n |= static_cast<uint64_t>(static_cast<unsigned char>(file[8 + b])) << (8 * b);
  }
  if (file.size() != kHeader + (chunks + 7) / 8 || file.compare(0, 8, magic) != 0 || n != chunks) {
    return Status::Corruption(path + ": not the bitmap of this volume (" + std::to_string(chunks) + " chunks)");
  }
  std::vector<bool> bits(chunks);
  for (uint64_t i = 0; i < chunks; ++i) bits[i] = (static_cast<unsigned char>(file[kHeader + i / 8]) >> (i % 8)) & 1;
  return bits;
}

}  // namespace

Status BitmapFile::Create(const std::string& path, std::string_view magic, const std::vector<bool>& bits) {
  return WriteFileAtomic(path, Encode(magic, bits));
}

Result<std::unique_ptr<BitmapFile>> BitmapFile::Open(const std::string& path, std::string_view magic,
                                                     uint64_t chunks, const std::function<bool(uint64_t)>& initial,
                                                     BitmapHooks hooks, bool* created) {
  struct stat st;
  bool fresh = ::stat(path.c_str(), &st) != 0 ? errno == ENOENT : st.st_size == 0;
  if (fresh) {
    std::vector<bool> bits(chunks);
    for (uint64_t i = 0; i < chunks; ++i) bits[i] = initial(i);
    FERRY_RETURN_IF_ERROR(Create(path, magic, bits));
  }
  if (created) *created = fresh;
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, path);
  std::unique_ptr<BitmapFile> f(new BitmapFile(fd, path, std::move(hooks)));
  if (::fstat(fd, &st) != 0) return Status::FromErrno(errno, path);
  std::string file(static_cast<size_t>(st.st_size), '\0');
  FERRY_RETURN_IF_ERROR(PreadOrZeros(fd, file.data(), file.size(), 0, "volume bitmap read"));
  FERRY_ASSIGN_OR_RETURN(f->loaded_, Decode(file, magic, chunks, path));
  f->durable_ = f->loaded_;
  return f;
}

BitmapFile::~BitmapFile() { ::close(fd_); }

Status BitmapFile::Set(const std::vector<uint64_t>& chunks) {
  if (chunks.empty()) return Status::Ok();
  std::unique_lock lock(mu_);
  const uint64_t group = open_;
  pending_.insert(pending_.end(), chunks.begin(), chunks.end());
  for (;;) {
    if (done_ >= group) {
      // The group's commit is over: the bits tell how it went.
      bool all = std::all_of(chunks.begin(), chunks.end(), [&](uint64_t i) { return durable_[i]; });
      return all ? Status::Ok() : error_;
    }
    if (!committing_) break;  // lead the open group (ours)
    cv_.wait(lock);
  }
  // Leader: close the group; later callers form the next one.
  committing_ = true;
  std::vector<uint64_t> group_chunks;
  group_chunks.swap(pending_);
  ++open_;
  lock.unlock();
  Status st = CommitGroup(group_chunks);
  lock.lock();
  if (st.ok()) {
    for (uint64_t j : group_chunks) durable_[j] = true;
  } else {
    error_ = st;
  }
  committing_ = false;
  done_ = group;
  cv_.notify_all();
  if (!st.ok()) return st;
  bool all = std::all_of(chunks.begin(), chunks.end(), [&](uint64_t i) { return durable_[i]; });
  return all ? Status::Ok() : error_;
}

Status BitmapFile::CommitGroup(const std::vector<uint64_t>& chunks) {
  if (hooks_.before_write) FERRY_RETURN_IF_ERROR(hooks_.before_write());
  // The bytes spanning the group, from the durable bits and the group's.
  // durable_ changes only under the leader, which this thread is.
  auto [lo, hi] = std::minmax_element(chunks.begin(), chunks.end());
  uint64_t first = *lo / 8, last = *hi / 8;
  std::string bytes(last - first + 1, '\0');
  for (uint64_t j = first * 8; j < std::min<uint64_t>((last + 1) * 8, durable_.size()); ++j) {
    if (durable_[j]) bytes[j / 8 - first] = static_cast<char>(bytes[j / 8 - first] | (1 << (j % 8)));
  }
  for (uint64_t j : chunks) bytes[j / 8 - first] = static_cast<char>(bytes[j / 8 - first] | (1 << (j % 8)));
  FERRY_RETURN_IF_ERROR(PwriteFull(fd_, bytes, kHeader + first, "volume bitmap write"));
  FERRY_RETURN_IF_ERROR(DataSync(fd_));
  commits_.fetch_add(1, std::memory_order_relaxed);
  if (hooks_.show) hooks_.show(chunks);
  return Status::Ok();
}

}  // namespace ferry::volume
