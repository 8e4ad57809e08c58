#pragma once
// The parts of a store-to-store multipart copy (ops/multipart_upload.h):
// each part is one ranged GET of one version of the source object (If-Match
// its ETag), read into a buffer (ops/buffer_sink.h) and hashed as it
// streams, then sent from that buffer with its Content-MD5, so the
// destination refuses bytes damaged on the way. Memory: one part's buffer
// per part in flight. Thread-safe.

#include <string>

#include "engine/buffer_pool.h"
#include "engine/rate_limiter.h"
#include "ops/multipart_upload.h"
#include "store/object_store.h"

namespace ferry {

class RangePartReader : public PartReader {
 public:
  // `etag`: the version every range must come from. `bwlimit` (bytes/s
  // read) and `buffers` may be null.
  RangePartReader(ObjectStore& src, std::string key, std::string etag,
                  RateLimiter* bwlimit = nullptr, BufferPool* buffers = nullptr)
      : src_(src),
        key_(std::move(key)),
        etag_(std::move(etag)),
        bwlimit_(bwlimit),
        buffers_(buffers) {}

  // Fails with kCorruption (retryable) when the source sends fewer bytes.
  Status Read(const PartSpan& part, const PartSend& send) override;

 private:
  ObjectStore& src_;
  const std::string key_;
  const std::string etag_;
  RateLimiter* bwlimit_;
  BufferPool* buffers_;
};

}  // namespace ferry
