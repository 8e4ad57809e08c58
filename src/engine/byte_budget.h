#pragma once
// A budget of buffer bytes shared by every transfer of a job, so the memory
// a migration holds in object and part buffers stays under a fixed bound
// whatever the mix of object sizes and however many workers run. A request
// larger than the whole budget is clamped to it (it then runs alone).
// Thread-safe.

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace ferry {

class ByteBudget {
 public:
  explicit ByteBudget(uint64_t capacity) : capacity_(capacity ? capacity : 1) {}

  // Blocks until `n` bytes (clamped to the capacity) are free and takes
  // them. Returns the amount taken, to hand back to Release().
  uint64_t Acquire(uint64_t n) {
    n = n > capacity_ ? capacity_ : n;
    std::unique_lock<std::mutex> lock(mu_);
    if (used_ + n > capacity_) {
      ++waiters_;  // TryAcquire() leaves freed bytes to us meanwhile
      cv_.wait(lock, [&] { return used_ + n <= capacity_; });
      --waiters_;
    }
    used_ += n;
    return n;
  }
  // Takes `n` bytes (clamped) only if they are free now and no Acquire() is
  // waiting (a caller that never waits must not starve those that do);
  // `*taken` is the amount to hand back to Release().
  bool TryAcquire(uint64_t n, uint64_t* taken) {
    n = n > capacity_ ? capacity_ : n;
    std::lock_guard<std::mutex> lock(mu_);
    if (used_ + n > capacity_ || waiters_ > 0) return false;
    used_ += n;
    *taken = n;
    return true;
  }
  void Release(uint64_t n) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      used_ -= n;
    }
    cv_.notify_all();
  }
  uint64_t capacity() const { return capacity_; }

 private:
  const uint64_t capacity_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t used_ = 0;  // guarded by mu_
  int waiters_ = 0;    // guarded by mu_; Acquire() calls waiting
};

// Holds bytes of a ByteBudget for a scope.
class BudgetHold {
 public:
  // Waits for `n` bytes of `b` (none when `b` is null).
  BudgetHold(ByteBudget* b, uint64_t n) : b_(b), n_(b ? b->Acquire(n) : 0) {}
  // Adopts `taken` bytes already acquired from `b`.
  struct Adopt {};
  BudgetHold(ByteBudget* b, uint64_t taken, Adopt) : b_(b), n_(taken) {}
  ~BudgetHold() { Release(); }
  // Gives the bytes back before the scope ends (at most once).
  void Release() {
    if (b_) b_->Release(n_);
    b_ = nullptr;
  }
  BudgetHold(const BudgetHold&) = delete;
  BudgetHold& operator=(const BudgetHold&) = delete;

 private:
  ByteBudget* b_;
  uint64_t n_;
};

}  // namespace ferry
