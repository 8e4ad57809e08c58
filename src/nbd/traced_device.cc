#include "nbd/traced_device.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ferry::nbd {

Result<std::shared_ptr<TracedDevice>> TracedDevice::Open(std::shared_ptr<BlockDevice> inner,
                                                         const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status(errno == EEXIST ? ErrorCode::kAlreadyExists : ErrorCode::kIoError,
                  path + ": " + std::strerror(errno));
  }
  std::string header = TraceHeader(inner->size());
  if (::write(fd, header.data(), header.size()) != static_cast<ssize_t>(header.size())) {
    Status st(ErrorCode::kIoError, path + ": " + std::strerror(errno));
    ::close(fd);
    return st;
  }
  return std::shared_ptr<TracedDevice>(new TracedDevice(std::move(inner), fd));
}

TracedDevice::~TracedDevice() { ::close(fd_); }

uint64_t TracedDevice::Now() {
  std::lock_guard lock(mu_);
  Clock::time_point now = Clock::now();
  if (!started_) {
    started_ = true;
    t0_ = now;
  }
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(now - t0_).count());
}

void TracedDevice::Record(uint64_t issue_us, TraceOp op, uint64_t offset, uint64_t length,
                          bool fua) {
  std::string line = FormatTraceRecord({issue_us, Now(), op, offset, length, fua});
  // One append per line (O_APPEND): lines of concurrent requests never
  // interleave. A failed write loses that line only; the I/O goes on.
  (void)!::write(fd_, line.data(), line.size());
}

Status TracedDevice::Read(uint64_t offset, uint64_t len, char* out) {
  uint64_t t = Now();
  Status st = inner_->Read(offset, len, out);
  Record(t, TraceOp::kRead, offset, len, false);
  return st;
}

Status TracedDevice::Write(uint64_t offset, std::string_view data, bool fua) {
  uint64_t t = Now();
  Status st = inner_->Write(offset, data, fua);
  Record(t, TraceOp::kWrite, offset, data.size(), fua);
  return st;
}

Status TracedDevice::Flush() {
  uint64_t t = Now();
  Status st = inner_->Flush();
  Record(t, TraceOp::kFlush, 0, 0, false);
  return st;
}

Status TracedDevice::Trim(uint64_t offset, uint64_t len, bool fua) {
  uint64_t t = Now();
  Status st = inner_->Trim(offset, len, fua);
  Record(t, TraceOp::kTrim, offset, len, fua);
  return st;
}

Status TracedDevice::WriteZeroes(uint64_t offset, uint64_t len, bool fua) {
  uint64_t t = Now();
  Status st = inner_->WriteZeroes(offset, len, fua);
  Record(t, TraceOp::kZero, offset, len, fua);
  return st;
}

Status TracedDevice::Cache(uint64_t offset, uint64_t len) {
  uint64_t t = Now();
  Status st = inner_->Cache(offset, len);
  Record(t, TraceOp::kCache, offset, len, false);
  return st;
}

}  // namespace ferry::nbd
