#include "memory_blob_store.h"

#include <algorithm>

namespace ferry::s3server {
namespace {

using Segment = std::shared_ptr<const std::string>;

class MemoryBlob : public Blob {
 public:
  explicit MemoryBlob(std::vector<Segment> segments) : segments_(std::move(segments)) {
    starts_.reserve(segments_.size());
    for (const auto& s : segments_) {
      starts_.push_back(size_);
      size_ += s->size();
    }
  }

  uint64_t size() const override { return size_; }

  Result<std::string_view> ReadAt(uint64_t offset, size_t max,
                                  std::string* /*scratch*/) const override {
    if (offset >= size_ || max == 0) return Status::InvalidArgument("read past end of blob");
    // Last segment whose start is <= offset (empty segments are skipped).
    size_t i = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), offset) -
                                   starts_.begin()) -
               1;
    while (offset - starts_[i] >= segments_[i]->size()) ++i;
    const std::string& seg = *segments_[i];
    size_t within = static_cast<size_t>(offset - starts_[i]);
    return std::string_view(seg).substr(within, std::min(max, seg.size() - within));
  }

  const std::vector<Segment>& segments() const { return segments_; }

 private:
  std::vector<Segment> segments_;
  std::vector<uint64_t> starts_;
  uint64_t size_ = 0;
};

class MemoryBlobWriter : public BlobWriter {
 public:
  explicit MemoryBlobWriter(uint64_t size_hint) {
    // Cap the reservation so a lying Content-Length cannot exhaust memory up front.
    data_.reserve(static_cast<size_t>(std::min<uint64_t>(size_hint, 8ull << 30)));
  }
  Status Append(std::string_view data) override {
    data_.append(data);
    return Status::Ok();
  }
  Result<std::shared_ptr<const Blob>> Finish() override {
    std::vector<Segment> segs;
    segs.push_back(std::make_shared<const std::string>(std::move(data_)));
    return std::shared_ptr<const Blob>(std::make_shared<MemoryBlob>(std::move(segs)));
  }

 private:
  std::string data_;
};

}  // namespace

Result<std::unique_ptr<BlobWriter>> MemoryBlobStore::NewWriter(uint64_t size_hint) {
  return std::unique_ptr<BlobWriter>(std::make_unique<MemoryBlobWriter>(size_hint));
}

Result<std::shared_ptr<const Blob>> MemoryBlobStore::Concat(
    const std::vector<std::shared_ptr<const Blob>>& parts) {
  std::vector<Segment> segs;
  for (const auto& p : parts) {
    auto* mem = dynamic_cast<const MemoryBlob*>(p.get());
    if (mem == nullptr) return BlobStore::Concat(parts);
    segs.insert(segs.end(), mem->segments().begin(), mem->segments().end());
  }
  return std::shared_ptr<const Blob>(std::make_shared<MemoryBlob>(std::move(segs)));
}

}  // namespace ferry::s3server
