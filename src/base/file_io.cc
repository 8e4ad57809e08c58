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

namespace {
void AddRun(std::vector<FileRun>* runs, uint64_t length, bool hole) {
  if (length == 0) return;
  if (!runs->empty() && runs->back().hole == hole) {
    runs->back().length += length;
  } else {
    runs->push_back(FileRun{length, hole});
  }
}
}  // namespace

Result<std::vector<FileRun>> FileRuns(int fd, uint64_t offset, uint64_t len) {
  std::vector<FileRun> runs;
  const uint64_t end = offset + len;
  uint64_t at = offset;
  while (at < end) {
    off_t data = ::lseek(fd, static_cast<off_t>(at), SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) {  // no data from here to the end of the file
        AddRun(&runs, end - at, true);
        break;
      }
      if (errno == EINVAL || errno == EOPNOTSUPP) {  // cannot tell: data
        AddRun(&runs, end - at, false);
        break;
      }
      return Status::FromErrno(errno, "lseek(SEEK_DATA)");
    }
    uint64_t data_at = std::min<uint64_t>(static_cast<uint64_t>(data), end);
    AddRun(&runs, data_at - at, true);
    at = data_at;
    if (at >= end) break;
    off_t hole = ::lseek(fd, static_cast<off_t>(at), SEEK_HOLE);
    if (hole < 0) return Status::FromErrno(errno, "lseek(SEEK_HOLE)");
    uint64_t hole_at = std::min<uint64_t>(std::max<uint64_t>(static_cast<uint64_t>(hole), at + 1), end);
    AddRun(&runs, hole_at - at, false);
    at = hole_at;
  }
  return runs;
}

}  // namespace ferry
