#pragma once
// Small POSIX helpers for the local backend: an owning descriptor, full
// writes, fsync, directory creation and pruning, whole-tree removal, file
// data copies that let the kernel reflink or copy in place. Every failure is
// a Status built with Status::FromErrno naming the path.

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "base/atomic_file.h"
#include "base/status.h"

namespace ferry::local {

// Owns a file descriptor; closes it on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { Reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = other.Release();
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void Reset();

 private:
  int fd_ = -1;
};

// Nanoseconds since the epoch of st_mtim.
int64_t MtimeNs(const struct stat& st);

// `n` random lower-case hex digits (thread-safe; not for cryptography).
std::string RandomHex(size_t n);

// WriteAll, FsyncFd, FsyncDir: base/atomic_file.h.
using ::ferry::FsyncDir;
using ::ferry::FsyncFd;
using ::ferry::WriteAll;

// pread until `len` bytes are in `buf`; kCorruption if the file is shorter.
Status ReadFull(int fd, char* buf, size_t len, uint64_t offset, std::string_view path);


// Creates every directory of `rel_dir` (components joined by '/') below
// `root`, which must exist. An existing component that is not a directory is
// kAlreadyExists naming it: the key conflicts with an object at that path.
Status MakeDirs(const std::string& root, std::string_view rel_dir);

// Removes the now-empty directories of `rel_dir` below `root`, deepest
// first, stopping at the first that is not empty (or at the root).
void PruneEmptyDirs(const std::string& root, std::string_view rel_dir);

// rm -r. Missing is OK.
Status RemoveTree(const std::string& path);

// The whole content of a small file (at most `max_bytes`).
Result<std::string> ReadSmallFile(const std::string& path, size_t max_bytes);

// Creates `path` exclusively (O_EXCL) for writing; mode 0644 less umask.
Result<UniqueFd> CreateExclusive(const std::string& path);


// Copies `size` bytes from the start of `in` to `out` (both at offset 0 /
// current end), preferring a reflink (FICLONE), then copy_file_range, then
// read/write through a buffer.
Status CopyFileData(int in, int out, uint64_t size, std::string_view path);

// Appends `size` bytes of `in` to `out` at `out_offset` with copy_file_range,
// falling back to pread/pwrite.
Status AppendFileData(int in, int out, uint64_t size, uint64_t out_offset, std::string_view path);

// The name of a temp file in a directory: ".%tmp.<16 hex>" (reserved).
std::string TempName();

// "dir/name", or just "name" when dir is empty.
std::string JoinPath(std::string_view dir, std::string_view name);

// Splits "a/b/c" into ("a/b", "c"); ("", "c") for a single component.
std::pair<std::string_view, std::string_view> SplitDirName(std::string_view rel_path);

}  // namespace ferry::local
