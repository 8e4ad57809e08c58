#include "volume/chunk_capture.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "base/file_io.h"

namespace ferry::volume {
namespace {

// An unnamed file in `dir` (O_TMPFILE; else made and unlinked at once):
// nothing to clean up after a crash.
Result<int> OpenSpool(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  std::string tmpl = dir + "/.%tmp.spool.XXXXXX";
  fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, dir + ": snapshot spool");
  ::unlink(tmpl.c_str());
  return fd;
}

}  // namespace

Result<std::unique_ptr<ChunkCapture>> ChunkCapture::Create(int data_fd, uint64_t volume_size, uint64_t chunk_size,
                                                           std::vector<bool> frozen, const std::string& spool_dir) {
  FERRY_ASSIGN_OR_RETURN(int spool_fd, OpenSpool(spool_dir));
  std::unique_ptr<ChunkCapture> c(new ChunkCapture(data_fd, spool_fd, volume_size, chunk_size));
  c->state_.assign(frozen.size(), State::kNone);
  for (uint64_t i = 0; i < frozen.size(); ++i) {
    if (!frozen[i]) continue;
    c->state_[i] = State::kFrozen;
    c->chunks_.push_back(i);
  }
  return c;
}

ChunkCapture::~ChunkCapture() { ::close(spool_fd_); }

uint64_t ChunkCapture::spooled() const {
  std::lock_guard lock(mu_);
  return spooled_;
}

void ChunkCapture::Finish(uint64_t i, State next) {
  std::lock_guard lock(mu_);
  state_[i] = next;
  if (next == State::kSpooled) ++spooled_;
  cv_.notify_all();
}

Status ChunkCapture::BeforeWrite(uint64_t i) {
  {
    std::unique_lock lock(mu_);
    if (i >= state_.size()) return Status::Ok();
    cv_.wait(lock, [&] { return state_[i] != State::kCopying && state_[i] != State::kReading; });
    if (state_[i] != State::kFrozen) return Status::Ok();  // not frozen, spooled already, or taken
    state_[i] = State::kCopying;
  }
  std::string old(Length(i), '\0');
  Status st = PreadOrZeros(data_fd_, old.data(), old.size(), i * chunk_size_, "snapshot capture read");
  // No sync: a crash ends the snapshot (nothing of it was published).
  if (st.ok()) st = PwriteFull(spool_fd_, old, i * chunk_size_, "snapshot spool write");
  Finish(i, st.ok() ? State::kSpooled : State::kFrozen);
  return st;
}

Result<std::string> ChunkCapture::Take(uint64_t i) {
  State was;
  {
    std::unique_lock lock(mu_);
    if (i >= state_.size()) return Status::InvalidArgument("chunk " + std::to_string(i) + " is not frozen");
    cv_.wait(lock, [&] { return state_[i] != State::kCopying && state_[i] != State::kReading; });
    was = state_[i];
    if (was != State::kFrozen && was != State::kSpooled) {
      return Status::InvalidArgument("chunk " + std::to_string(i) + " is not frozen or was taken");
    }
    if (was == State::kFrozen) state_[i] = State::kReading;  // writers wait while the data file is read
  }
  std::string bytes(Length(i), '\0');
  const int fd = was == State::kFrozen ? data_fd_ : spool_fd_;
  Status st = PreadOrZeros(fd, bytes.data(), bytes.size(), i * chunk_size_, "snapshot capture read");
  if (!st.ok()) {
    Finish(i, was);  // as it was: a retry may take it again
    return st;
  }
  Finish(i, State::kTaken);
  // Best effort: the spool's copy is no longer needed.
  if (was == State::kSpooled) (void)ZeroRange(spool_fd_, i * chunk_size_, bytes.size(), "snapshot spool");
  return bytes;
}

}  // namespace ferry::volume
