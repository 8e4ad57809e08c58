#include "base/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace ferry {

Status PwriteFull(int fd, std::string_view data, uint64_t offset, std::string_view what) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::pwrite(fd, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FromErrno(errno, what);
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Result<uint64_t> PreadUpTo(int fd, char* out, uint64_t len, uint64_t offset,
                           std::string_view what) {
  uint64_t done = 0;
  while (done < len) {
    ssize_t n = ::pread(fd, out + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FromErrno(errno, what);
    if (n == 0) break;  // the file's end
    done += static_cast<uint64_t>(n);
  }
  return done;
}

Status PreadOrZeros(int fd, char* out, uint64_t len, uint64_t offset, std::string_view what) {
  FERRY_ASSIGN_OR_RETURN(uint64_t got, PreadUpTo(fd, out, len, offset, what));
  std::memset(out + got, 0, len - got);
  return Status::Ok();
}

Status ZeroRange(int fd, uint64_t offset, uint64_t len, std::string_view what) {
  if (len == 0) return Status::Ok();
  if (::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                  static_cast<off_t>(len)) == 0) {
    return Status::Ok();
  }
  const std::string zeros(std::min<uint64_t>(len, 1 << 20), '\0');
  for (uint64_t at = 0; at < len; at += zeros.size()) {
    std::string_view piece(zeros.data(), std::min<uint64_t>(zeros.size(), len - at));
    FERRY_RETURN_IF_ERROR(PwriteFull(fd, piece, offset + at, what));
  }
  return Status::Ok();
}

Status DataSync(int fd) {
  if (::fdatasync(fd) != 0) return Status::FromErrno(errno, "fdatasync");
  return Status::Ok();
}

}  // namespace ferry
