#include "engine/buffer_pool.h"

#include <algorithm>

namespace ferry {

BufferPool::Lease& BufferPool::Lease::operator=(Lease&& o) noexcept {
  if (this != &o) {
    Release();
    pool_ = o.pool_;
    data_ = std::move(o.data_);
    capacity_ = o.capacity_;
    o.pool_ = nullptr;
    o.capacity_ = 0;
  }
  return *this;
}

void BufferPool::Lease::Release() {
  if (pool_ != nullptr && data_) pool_->Give(std::move(data_), capacity_);
  data_.reset();
  pool_ = nullptr;
  capacity_ = 0;
}

BufferPool::Lease BufferPool::Take(BufferPool* pool, size_t n) {
  n = std::max<size_t>(n, 1);
  if (pool == nullptr || n < kMinPooled) {
    return Lease(nullptr, std::make_unique_for_overwrite<char[]>(n), n);
  }
  {
    std::lock_guard<std::mutex> lock(pool->mu_);
    // The smallest free buffer that fits, if it is not wastefully large.
    auto best = pool->free_.end();
    for (auto it = pool->free_.begin(); it != pool->free_.end(); ++it) {
      if (it->capacity >= n && it->capacity / 2 <= n &&
          (best == pool->free_.end() || it->capacity < best->capacity)) {
        best = it;
      }
    }
    if (best != pool->free_.end()) {
      Lease lease(pool, std::move(best->data), best->capacity);
      pool->kept_ -= best->capacity;
      pool->free_.erase(best);
      pool->reused_++;
      return lease;
    }
  }
  // Rounded up to 64 KiB so that parts of nearly equal sizes share buffers.
  size_t cap = (n + 0xFFFF) & ~size_t{0xFFFF};
  return Lease(pool, std::make_unique_for_overwrite<char[]>(cap), cap);
}

void BufferPool::Give(std::unique_ptr<char[]> data, size_t capacity) {
  std::lock_guard<std::mutex> lock(mu_);
  if (kept_ + capacity > max_kept_) {
    // Make room by dropping smaller buffers first when this one is larger:
    // the pool then holds the sizes in use now.
    std::sort(free_.begin(), free_.end(),
              [](const Free& a, const Free& b) { return a.capacity < b.capacity; });
    while (!free_.empty() && kept_ + capacity > max_kept_ && free_.front().capacity < capacity) {
      kept_ -= free_.front().capacity;
      free_.erase(free_.begin());
    }
    if (kept_ + capacity > max_kept_) return;  // data is freed here
  }
  kept_ += capacity;
  free_.push_back(Free{std::move(data), capacity});
}

size_t BufferPool::kept_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kept_;
}

size_t BufferPool::reused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reused_;
}

}  // namespace ferry
