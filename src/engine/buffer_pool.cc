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
  // Rounded up to 64 KiB so that parts of nearly equal sizes share buffers.
  size_t cap = (n + 0xFFFF) & ~size_t{0xFFFF};
  {
    std::lock_guard<std::mutex> lock(pool->mu_);
    // The smallest free buffer that fits, if it is not much larger.
    auto best = pool->free_.end();
    for (auto it = pool->free_.begin(); it != pool->free_.end(); ++it) {
      if (it->capacity >= n && it->capacity - n <= n / 4 &&
          (best == pool->free_.end() || it->capacity < best->capacity)) {
        best = it;
      }
    }
    if (best != pool->free_.end()) {
      Lease lease(pool, std::move(best->data), best->capacity);
      pool->kept_ -= best->capacity;
      pool->leased_ += best->capacity;
      pool->free_.erase(best);
      pool->reused_++;
      return lease;
    }
    pool->leased_ += cap;
  }
  try {
    return Lease(pool, std::make_unique_for_overwrite<char[]>(cap), cap);
  } catch (...) {
    std::lock_guard<std::mutex> lock(pool->mu_);
    pool->leased_ -= cap;
    throw;
  }
}

void BufferPool::Give(std::unique_ptr<char[]> data, size_t capacity) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  leased_ -= capacity;
  if (leased_ + capacity > limit_) return;  // can never fit: freed here
  if (leased_ + kept_ + capacity > limit_) {
    // Room is made by dropping smaller free buffers, and only when dropping
    // them makes enough: the pool then holds the sizes in use now.
    size_t need = leased_ + kept_ + capacity - limit_;
    size_t smaller = 0;
    for (const Free& f : free_) {
      if (f.capacity < capacity) smaller += f.capacity;
    }
    if (smaller < need) return;  // freed here
    std::sort(free_.begin(), free_.end(),
              [](const Free& a, const Free& b) { return a.capacity < b.capacity; });
    size_t dropped = 0;
    auto it = free_.begin();
    while (dropped < need) {
      dropped += it->capacity;
      ++it;
    }
    kept_ -= dropped;
    free_.erase(free_.begin(), it);
  }
  try {
    free_.push_back(Free{std::move(data), capacity});
    kept_ += capacity;
  } catch (...) {
    // No memory to remember it by: the buffer is freed instead.
  }
}

size_t BufferPool::kept_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kept_;
}

size_t BufferPool::reused() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reused_;
}

size_t BufferPool::leased_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return leased_;
}

}  // namespace ferry
