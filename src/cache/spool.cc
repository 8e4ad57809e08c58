#include "cache/spool.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "base/file_io.h"

namespace ferry::cache {

Result<std::shared_ptr<Spool>> Spool::Create(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    // File systems without O_TMPFILE: a named file, unlinked at once.
    std::string path = dir + "/spool.XXXXXX";
    fd = ::mkostemp(path.data(), O_CLOEXEC);
    if (fd < 0) return Status::FromErrno(errno, "spool in " + dir);
    ::unlink(path.c_str());
  }
  return std::shared_ptr<Spool>(new Spool(fd));
}

Spool::~Spool() { ::close(fd_); }

Status Spool::Write(std::string_view data) {
  uint64_t at;
  {
    std::lock_guard lock(mu_);
    if (cancelled_) return Status(ErrorCode::kCancelled, "the client went away");
    at = written_;
  }
  FERRY_RETURN_IF_ERROR(PwriteFull(fd_, data, at, "spool write"));
  std::lock_guard lock(mu_);
  written_ += data.size();
  cv_.notify_all();
  return Status::Ok();
}

void Spool::Finish(Status status) {
  std::lock_guard lock(mu_);
  finished_ = true;
  status_ = std::move(status);
  cv_.notify_all();
}

Result<std::string> Spool::Read(size_t max) {
  uint64_t available;
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return written_ > read_ || finished_; });
    if (written_ == read_) {
      if (!status_.ok()) return status_;
      return std::string();
    }
    available = written_ - read_;
  }
  std::string out(static_cast<size_t>(std::min<uint64_t>(available, max)), '\0');
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(read_ + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::FromErrno(n < 0 ? errno : EIO, "spool read");
    done += static_cast<size_t>(n);
  }
  read_ += out.size();
  return out;
}

void Spool::Cancel() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
  cv_.notify_all();
}

uint64_t Spool::written() const {
  std::lock_guard lock(mu_);
  return written_;
}

}  // namespace ferry::cache
