#include "store/local/fs_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <random>
#include <vector>

#include "base/file_io.h"

namespace ferry::local {
namespace {

constexpr size_t kCopyBufferBytes = 1 << 20;

std::string Quote(std::string_view what, std::string_view path) {
  std::string s(what);
  s += " ";
  s += path;
  return s;
}

Status CopyThroughBuffer(int in, int out, uint64_t size, uint64_t in_offset, uint64_t out_offset,
                         std::string_view path) {
  std::unique_ptr<char[]> buf(new char[kCopyBufferBytes]);
  while (size > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(size, kCopyBufferBytes));
    FERRY_RETURN_IF_ERROR(ReadFull(in, buf.get(), want, in_offset, path));
    size_t done = 0;
    while (done < want) {
      ssize_t n =
          ::pwrite(out, buf.get() + done, want - done, static_cast<off_t>(out_offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Status::FromErrno(errno, Quote("write", path));
      done += static_cast<size_t>(n);
    }
    size -= want;
    in_offset += want;
    out_offset += want;
  }
  return Status::Ok();
}

// copy_file_range from in_offset to out_offset; returns false (and copies
// nothing further) if the kernel or file system cannot do it here.
Result<bool> CopyRange(int in, int out, uint64_t size, uint64_t in_offset, uint64_t out_offset,
                       std::string_view path) {
  auto in_off = static_cast<loff_t>(in_offset);
  auto out_off = static_cast<loff_t>(out_offset);
  uint64_t left = size;
  while (left > 0) {
    ssize_t n = ::copy_file_range(in, &in_off, out, &out_off, left, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (left == size &&
          (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL)) {
        return false;
      }
      return Status::FromErrno(errno, Quote("copy_file_range", path));
    }
    if (n == 0) return Status::Corruption(Quote("source shrank while copying", path));
    left -= static_cast<uint64_t>(n);
  }
  return true;
}

}  // namespace

void UniqueFd::Reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

std::string RandomHex(size_t n) {
  thread_local std::mt19937_64 rng([] {
    std::random_device rd;
    std::seed_seq seq{rd(), rd(), rd(), rd()};
    return std::mt19937_64(seq);
  }());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(n, '0');
  for (char& c : out) c = kHex[rng() & 15];
  return out;
}

Status ReadFull(int fd, char* buf, size_t len, uint64_t offset, std::string_view path) {
  FERRY_ASSIGN_OR_RETURN(uint64_t got, PreadUpTo(fd, buf, len, offset, Quote("read", path)));
  if (got < len) return Status::Corruption(Quote("file shrank while reading", path));
  return Status::Ok();
}

Status MakeDirs(const std::string& root, std::string_view rel_dir) {
  if (rel_dir.empty()) return Status::Ok();
  std::string path = root;
  size_t start = 0;
  while (start <= rel_dir.size()) {
    size_t slash = rel_dir.find('/', start);
    if (slash == std::string_view::npos) slash = rel_dir.size();
    path += '/';
    path.append(rel_dir.substr(start, slash - start));
    if (::mkdir(path.c_str(), 0755) != 0) {
      int err = errno;
      struct stat st;
      if (err == EEXIST && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        // Already there (ours or a concurrent writer's).
      } else if (err == EEXIST || err == ENOTDIR) {
        return Status::AlreadyExists("conflicts with an object stored at " + path);
      } else {
        return Status::FromErrno(err, Quote("mkdir", path));
      }
    }
    start = slash + 1;
  }
  return Status::Ok();
}

void PruneEmptyDirs(const std::string& root, std::string_view rel_dir) {
  while (!rel_dir.empty()) {
    std::string path = root + "/" + std::string(rel_dir);
    if (::rmdir(path.c_str()) != 0) return;  // not empty, gone, or not ours
    size_t slash = rel_dir.rfind('/');
    rel_dir = slash == std::string_view::npos ? std::string_view() : rel_dir.substr(0, slash);
  }
}

Status RemoveTree(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return Status::FromErrno(errno, Quote("stat", path));
  }
  if (S_ISDIR(st.st_mode)) {
    std::vector<std::string> names;
    {
      DIR* dir = ::opendir(path.c_str());
      if (dir == nullptr) return Status::FromErrno(errno, Quote("opendir", path));
      while (struct dirent* e = ::readdir(dir)) {
        std::string_view name = e->d_name;
        if (name != "." && name != "..") names.emplace_back(name);
      }
      ::closedir(dir);
    }
    for (const std::string& name : names) FERRY_RETURN_IF_ERROR(RemoveTree(path + "/" + name));
    if (::rmdir(path.c_str()) != 0 && errno != ENOENT) {
      return Status::FromErrno(errno, Quote("rmdir", path));
    }
    return Status::Ok();
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Status::FromErrno(errno, Quote("unlink", path));
  }
  return Status::Ok();
}

Result<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::FromErrno(errno, Quote("open", path));
  std::string out;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FromErrno(errno, Quote("read", path));
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) return Status::Corruption(Quote("unexpectedly large file", path));
  }
}

Result<UniqueFd> CreateExclusive(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!fd.valid()) return Status::FromErrno(errno, Quote("create", path));
  return fd;
}

Status CopyFileData(int in, int out, uint64_t size, std::string_view path) {
  if (size == 0) return Status::Ok();
  if (::ioctl(out, FICLONE, in) == 0) return Status::Ok();
  FERRY_ASSIGN_OR_RETURN(bool copied, CopyRange(in, out, size, 0, 0, path));
  if (copied) return Status::Ok();
  return CopyThroughBuffer(in, out, size, 0, 0, path);
}

Status AppendFileData(int in, int out, uint64_t size, uint64_t out_offset, std::string_view path) {
  if (size == 0) return Status::Ok();
  FERRY_ASSIGN_OR_RETURN(bool copied, CopyRange(in, out, size, 0, out_offset, path));
  if (copied) return Status::Ok();
  return CopyThroughBuffer(in, out, size, 0, out_offset, path);
}

std::string TempName() { return TempFileIn(""); }

std::string JoinPath(std::string_view dir, std::string_view name) {
  std::string out(dir);
  if (!out.empty()) out += '/';
  out.append(name);
  return out;
}

std::pair<std::string_view, std::string_view> SplitDirName(std::string_view rel_path) {
  size_t slash = rel_path.rfind('/');
  if (slash == std::string_view::npos) return {std::string_view(), rel_path};
  return {rel_path.substr(0, slash), rel_path.substr(slash + 1)};
}

}  // namespace ferry::local
