#include "nbd/file_device.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ferry::nbd {

Result<std::unique_ptr<FileDevice>> FileDevice::Open(const std::string& path, uint64_t size, bool read_only) {
  int flags = (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC | (size > 0 ? O_CREAT : 0);
  int fd = ::open(path.c_str(), flags, 0600);
  if (fd < 0) return Status::FromErrno(errno, path);
  if (size > 0 && ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    int e = errno;
    ::close(fd);
    return Status::FromErrno(e, path + ": resize");
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return Status::FromErrno(e, path);
  }
  return std::unique_ptr<FileDevice>(new FileDevice(fd, static_cast<uint64_t>(st.st_size), read_only));
}

FileDevice::~FileDevice() { ::close(fd_); }

Status FileDevice::Read(uint64_t offset, uint64_t len, char* out) {
  uint64_t done = 0;
  while (done < len) {
    ssize_t n = ::pread(fd_, out + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FromErrno(errno, "read");
    if (n == 0) {  // past the file's end (it shrank under us): zeros
      std::memset(out + done, 0, len - done);
      break;
    }
    done += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

Status FileDevice::Write(uint64_t offset, std::string_view data, bool fua) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::pwrite(fd_, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FromErrno(errno, "write");
    done += static_cast<size_t>(n);
  }
  return fua ? Flush() : Status::Ok();
}

Status FileDevice::Flush() {
  if (::fdatasync(fd_) != 0) return Status::FromErrno(errno, "fdatasync");
  return Status::Ok();
}

Status FileDevice::Trim(uint64_t offset, uint64_t len, bool fua) { return WriteZeroes(offset, len, fua); }

Status FileDevice::WriteZeroes(uint64_t offset, uint64_t len, bool fua) {
  if (len == 0) return Status::Ok();
  if (::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                  static_cast<off_t>(len)) != 0) {
    // A file system without hole punching: write the zeros.
    std::string zeros(std::min<uint64_t>(len, 1 << 20), '\0');
    for (uint64_t at = 0; at < len; at += zeros.size()) {
      FERRY_RETURN_IF_ERROR(Write(offset + at, std::string_view(zeros).substr(0, std::min<uint64_t>(zeros.size(), len - at)), false));
    }
  }
  return fua ? Flush() : Status::Ok();
}

}  // namespace ferry::nbd
