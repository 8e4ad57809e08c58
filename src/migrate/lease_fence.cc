#include "migrate/lease_fence.h"

#include <algorithm>
#include <string>

namespace ferry::migrate {

void LeaseFence::Renewed(int64_t until_ms) {
  int64_t cur = held_until_ms_.load();
  while (until_ms > cur && !held_until_ms_.compare_exchange_weak(cur, until_ms)) {
  }
}

Status LeaseFence::Check(int64_t now_ms, int64_t claimed_until_ms) const {
  const int64_t until = std::max(held_until_ms_.load(), claimed_until_ms);
  if (now_ms + margin_ms_ < until) return Status::Ok();
  return Status::Cancelled("the object's lease ends in " + std::to_string(until - now_ms) +
                           " ms (renewals are failing): not writing it, another runner may");
}

}  // namespace ferry::migrate
