#pragma once
// A BlockDevice over a (sparse) file: reads and writes with pread/pwrite,
// FLUSH and FUA with fdatasync, TRIM and WRITE_ZEROES by punching holes
// (zeros read back); its extents are the file's holes and data (SEEK_HOLE).
// Thread-safe (positional I/O only).

#include <memory>
#include <string>

#include "nbd/device.h"

namespace ferry::nbd {

class FileDevice : public BlockDevice {
 public:
  // Opens `path`; with `size` > 0 the file is created or resized (sparse)
  // to that size first.
  static Result<std::unique_ptr<FileDevice>> Open(const std::string& path, uint64_t size, bool read_only);
  ~FileDevice() override;

  uint64_t size() const override { return size_; }
  bool read_only() const override { return read_only_; }
  Status Read(uint64_t offset, uint64_t len, char* out) override;
  Status Write(uint64_t offset, std::string_view data, bool fua) override;
  Status Flush() override;
  Status Trim(uint64_t offset, uint64_t len, bool fua) override;
  Status WriteZeroes(uint64_t offset, uint64_t len, bool fua) override;
  Status Extents(uint64_t offset, uint64_t len, std::vector<Extent>* out) override;

 private:
  FileDevice(int fd, uint64_t size, bool read_only) : fd_(fd), size_(size), read_only_(read_only) {}
  const int fd_;
  const uint64_t size_;
  const bool read_only_;
};

}  // namespace ferry::nbd
