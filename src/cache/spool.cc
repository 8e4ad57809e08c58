#include "cache/spool.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "base/file_io.h"

namespace ferry::cache {

class Spool::Reader : public http::BodyReader {
 public:
  explicit Reader(std::shared_ptr<Spool> spool) : spool_(std::move(spool)) {}
  ~Reader() override {
    if (!left_) spool_->ReaderLeft();
  }
  Result<std::string> Read(size_t max) override {
    auto piece = spool_->ReadAt(read_, max);
    if (!piece.ok() || piece->empty()) Leave();  // the end, or the writer's error
    if (piece.ok()) read_ += piece->size();
    return piece;
  }
  void Cancel() override { Leave(); }

 private:
  void Leave() {
    if (left_) return;
    left_ = true;
    spool_->ReaderLeft();
  }

  std::shared_ptr<Spool> spool_;
  uint64_t read_ = 0;
  bool left_ = false;
};

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
    if (abandoned_) return Status(ErrorCode::kCancelled, "every reader went away");
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

std::shared_ptr<http::BodyReader> Spool::NewReader(bool client) {
  {
    std::lock_guard lock(mu_);
    readers_++;
    client_came_ |= client;
  }
  return std::make_shared<Reader>(shared_from_this());
}

void Spool::ReaderLeft() {
  std::lock_guard lock(mu_);
  if (--readers_ == 0 && client_came_ && !finished_) abandoned_ = true;
}

void Spool::AbandonIfUnread() {
  std::lock_guard lock(mu_);
  client_came_ = true;
  if (readers_ == 0 && !finished_) abandoned_ = true;
}

Result<std::string> Spool::ReadAt(uint64_t offset, size_t max) {
  uint64_t available;
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return written_ > offset || finished_; });
    if (written_ <= offset) {
      if (!status_.ok()) return status_;
      return std::string();
    }
    available = written_ - offset;
  }
  std::string out(static_cast<size_t>(std::min<uint64_t>(available, max)), '\0');
  FERRY_ASSIGN_OR_RETURN(uint64_t n, PreadUpTo(fd_, out.data(), out.size(), offset, "spool read"));
  if (n != out.size()) return Status::IoError("spool read: the file is shorter than what was written");
  return out;
}

uint64_t Spool::written() const {
  std::lock_guard lock(mu_);
  return written_;
}

}  // namespace ferry::cache
