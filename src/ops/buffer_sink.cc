#include "ops/buffer_sink.h"

#include <cstring>

#include "base/cancel.h"

namespace ferry {
namespace {

// The message that tells an over-capacity body from other precondition
// failures (its code is kPreconditionFailed so that migrate retries it).
constexpr char kOverCapacity[] = "the object grew since it was listed";

}  // namespace

BufferSink::BufferSink(RateLimiter* limit, BufferPool* pool, size_t capacity, bool hash_md5)
    : limit_(limit), capacity_(capacity), data_(BufferPool::Take(pool, capacity)) {
  if (hash_md5) md5_.emplace(StreamingDigest::Kind::kMd5);
}

Status BufferSink::Write(std::string_view d) {
  char* at = Lend(d.size());
  if (at == nullptr) return Status(ErrorCode::kPreconditionFailed, kOverCapacity);
  std::memcpy(at, d.data(), d.size());
  return Commit(d.size());
}

char* BufferSink::Lend(size_t n) { return size_ + n > capacity_ ? nullptr : data_.data() + size_; }

Status BufferSink::Commit(size_t n) {
  if (CancelRequested()) return CancelledStatus();
  if (limit_ != nullptr && !limit_->unlimited() && !limit_->Take(static_cast<double>(n))) {
    return CancelledStatus();
  }
  if (md5_) md5_->Update(std::string_view(data_.data() + size_, n));
  size_ += n;
  return Status::Ok();
}

bool IsOverCapacity(const Status& s) {
  return s.code() == ErrorCode::kPreconditionFailed &&
         s.message().find(kOverCapacity) != std::string::npos;
}

}  // namespace ferry
