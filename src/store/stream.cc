#include "store/stream.h"

#include "base/cancel.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ferry {

namespace {
size_t ReadFrom(std::string_view data, size_t* pos, char* buf, size_t cap) {
  size_t n = std::min(cap, data.size() - *pos);
  std::memcpy(buf, data.data() + *pos, n);
  *pos += n;
  return n;
}
}  // namespace

Result<size_t> StringSource::Read(char* buf, size_t cap) { return ReadFrom(data_, &pos_, buf, cap); }

Result<size_t> ViewSource::Read(char* buf, size_t cap) { return ReadFrom(data_, &pos_, buf, cap); }

Result<size_t> FileRangeSource::Read(char* buf, size_t cap) {
  if (CancelRequested()) return CancelledStatus();
  uint64_t left = length_ - pos_;
  if (left == 0) return size_t{0};
  size_t want = static_cast<size_t>(std::min<uint64_t>(cap, left));
  for (;;) {
    ssize_t n = ::pread(fd_, buf, want, static_cast<off_t>(offset_ + pos_));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FromErrno(errno, "read");
    if (n == 0) return Status::Corruption("file shrank while reading");
    pos_ += static_cast<uint64_t>(n);
    return static_cast<size_t>(n);
  }
}

}  // namespace ferry
