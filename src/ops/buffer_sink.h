#pragma once
// A body read into one buffer of a fixed capacity (an object below the
// multipart threshold, or one part of a multipart copy): the buffer comes
// from a BufferPool, reads are paced by a bandwidth limit and stop at a
// cancellation, and the bytes can be hashed (MD5) as they stream. It lends
// its memory to the reader (ByteSink::Lend), so a body goes from the socket
// into it and from it to the next socket without a copy.
//
// A body longer than the capacity fails with kPreconditionFailed
// (IsOverCapacity): for a whole object, it grew since it was listed.
// One thread at a time.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "crypto/digest.h"
#include "engine/buffer_pool.h"
#include "engine/rate_limiter.h"
#include "store/stream.h"

namespace ferry {

class BufferSink : public ByteSink {
 public:
  // `limit` (bytes/s read) and `pool` may be null: unpaced, a plain buffer.
  BufferSink(RateLimiter* limit, BufferPool* pool, size_t capacity, bool hash_md5);

  Status Write(std::string_view d) override;
  char* Lend(size_t n) override;
  Status Commit(size_t n) override;

  // The bytes written so far.
  std::string_view data() const { return {data_.data(), size_}; }
  // Raw MD5 of what was written; only with `hash_md5`, and once.
  std::string Md5Raw() { return md5_->Finish(); }

 private:
  RateLimiter* limit_;
  std::optional<StreamingDigest> md5_;  // only when asked to hash
  size_t capacity_;
  BufferPool::Lease data_;
  size_t size_ = 0;
};

// True for the error of a body longer than its BufferSink's capacity.
bool IsOverCapacity(const Status& s);

}  // namespace ferry
