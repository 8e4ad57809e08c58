#pragma once
// The last guard against two runners writing one object: a runner starts a
// write to the destination (a PUT, a server-side copy, the completion of a
// multipart upload) only while it knows its lease on the object has at
// least `margin` left, so a runner whose renewals stall (a state store that
// is slow or gone) stops writing before another runner can claim the
// object, rather than uploading it beside that runner.
//
// What the runner knows: the lease it took with the claim, and the end its
// last successful renewal gave every lease it holds. A write already under
// way when the margin runs out is not recalled; a margin of half the lease
// (renewals come every quarter) leaves that only to a write slower than
// half a lease while renewals also fail.
//
// Thread-safe; Renewed() is called by the monitor, Check() by any transfer.

#include <atomic>
#include <cstdint>

#include "base/status.h"

namespace ferry::migrate {

class LeaseFence {
 public:
  // `held_until_ms`: an end every lease the runner will hold reaches (the
  // run's start plus the lease: claims come after it).
  LeaseFence(int64_t held_until_ms, int64_t margin_ms)
      : held_until_ms_(held_until_ms), margin_ms_(margin_ms) {}

  // After a renewal of every lease the runner holds to `until_ms` succeeded.
  void Renewed(int64_t until_ms);

  // OK when an object claimed until `claimed_until_ms` (0: unknown) is still
  // the runner's for `margin` past `now_ms`; Cancelled otherwise (the object
  // is released, not counted as a failure).
  Status Check(int64_t now_ms, int64_t claimed_until_ms) const;

  int64_t held_until_ms() const { return held_until_ms_.load(); }

 private:
  std::atomic<int64_t> held_until_ms_;
  const int64_t margin_ms_;
};

}  // namespace ferry::migrate
