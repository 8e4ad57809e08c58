#include "base/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <random>

#include "base/crash_point.h"

namespace ferry {
namespace {

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

std::string TempFileIn(const std::string& dir) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name = dir.empty() ? ".%tmp." : dir + "/.%tmp.";
  uint64_t r = rng();
  for (int i = 0; i < 16; ++i) name += kHex[(r >> (4 * i)) & 0xf];
  return name;
}

Status WriteAll(int fd, std::string_view data, std::string_view path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FromErrno(errno, "write " + std::string(path));
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status FsyncFd(int fd, std::string_view path) {
  if (::fsync(fd) != 0) return Status::FromErrno(errno, "fsync " + std::string(path));
  return Status::Ok();
}

Status FsyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "open directory " + dir);
  Status st = FsyncFd(fd, dir);
  ::close(fd);
  return st;
}

Status WriteFileAtomic(const std::string& path, std::string_view data,
                       const AtomicWriteOptions& options) {
  const std::string dir = DirOf(path);
  const std::string temp = TempFileIn(options.temp_dir.empty() ? dir : options.temp_dir);
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Status::FromErrno(errno, "create " + temp);
  Status st = WriteAll(fd, data, temp);
  if (st.ok() && options.sync) st = FsyncFd(fd, temp);
  if (::close(fd) != 0 && st.ok()) st = Status::FromErrno(errno, "close " + temp);
  if (st.ok()) {
    CrashPoint("atomic-write");
    if (::rename(temp.c_str(), path.c_str()) != 0) st = Status::FromErrno(errno, "rename to " + path);
  }
  if (!st.ok()) {
    ::unlink(temp.c_str());
    return st;
  }
  CrashPoint("atomic-renamed");
  return options.sync ? FsyncDir(dir) : Status::Ok();
}

}  // namespace ferry
