#include "nbd/file_device.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/file_io.h"

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
  return PreadOrZeros(fd_, out, len, offset, "read");  // past a shrunk file's end: zeros
}

Status FileDevice::Write(uint64_t offset, std::string_view data, bool fua) {
  FERRY_RETURN_IF_ERROR(PwriteFull(fd_, data, offset, "write"));
  return fua ? Flush() : Status::Ok();
}

Status FileDevice::Flush() { return DataSync(fd_); }

Status FileDevice::Trim(uint64_t offset, uint64_t len, bool fua) { return WriteZeroes(offset, len, fua); }

Status FileDevice::WriteZeroes(uint64_t offset, uint64_t len, bool fua) {
  FERRY_RETURN_IF_ERROR(ZeroRange(fd_, offset, len, "write"));
  return fua && len > 0 ? Flush() : Status::Ok();
}

Status FileDevice::Extents(uint64_t offset, uint64_t len, std::vector<Extent>* out) {
  auto runs = FileRuns(fd_, offset, len);
  if (!runs.ok()) return runs.status();
  out->clear();
  for (const FileRun& r : *runs) out->push_back(Extent{r.length, r.hole});
  return Status::Ok();
}

}  // namespace ferry::nbd
