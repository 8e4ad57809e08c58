#pragma once
// Recycles large transfer buffers (object bodies and multipart parts).
//
// glibc serves a large allocation with a fresh mapping (or from an arena it
// trims when the block is freed), so every 16 MiB part buffer cost the
// kernel 4,096 page faults, each zeroing a page, before a byte of the part
// arrived: a tenth of ferry's CPU in the migrate benchmark. The pool keeps buffers
// that were handed back and gives them out again.
//
// Contract: Take(n) returns a buffer of at least n bytes whose contents are
// unspecified. A buffer comes back to the pool when its Lease is destroyed.
// A free buffer is kept only while the pooled buffers leased out plus those
// kept stay within `limit_bytes` (the rest go back to the allocator), so a
// pool sized to a ByteBudget never holds memory beyond that budget: what
// it keeps is what leases just gave back. A free buffer is reused only when
// it is at most a quarter larger than asked for (a budget charges the size
// asked for). Thread-safe. The pool must outlive its leases.

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace ferry {

class BufferPool {
 public:
  // Buffers smaller than this are plain allocations (malloc keeps those
  // warm by itself); they are never pooled.
  static constexpr size_t kMinPooled = 256 * 1024;

  explicit BufferPool(size_t limit_bytes) : limit_(limit_bytes) {}
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& o) noexcept : pool_(o.pool_), data_(std::move(o.data_)), capacity_(o.capacity_) {
      o.pool_ = nullptr;
      o.capacity_ = 0;
    }
    Lease& operator=(Lease&& o) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { Release(); }

    char* data() const { return data_.get(); }
    size_t capacity() const { return capacity_; }

   private:
    friend class BufferPool;
    Lease(BufferPool* pool, std::unique_ptr<char[]> data, size_t capacity)
        : pool_(pool), data_(std::move(data)), capacity_(capacity) {}
    void Release();

    BufferPool* pool_ = nullptr;  // null: not pooled
    std::unique_ptr<char[]> data_;
    size_t capacity_ = 0;
  };

  // A buffer of at least `n` bytes (at least 1). `pool` may be null: the
  // buffer is then a plain allocation.
  static Lease Take(BufferPool* pool, size_t n);

  // Free bytes held, and how many Take()s were served from them.
  size_t kept_bytes() const;
  size_t reused() const;
  // Bytes of pooled buffers leased out now.
  size_t leased_bytes() const;

 private:
  struct Free {
    std::unique_ptr<char[]> data;
    size_t capacity;
  };
  void Give(std::unique_ptr<char[]> data, size_t capacity) noexcept;

  const size_t limit_;
  mutable std::mutex mu_;
  std::vector<Free> free_;  // guarded by mu_
  size_t kept_ = 0;         // guarded by mu_: bytes in free_
  size_t leased_ = 0;       // guarded by mu_: bytes of pooled leases out
  size_t reused_ = 0;       // guarded by mu_
};

}  // namespace ferry
