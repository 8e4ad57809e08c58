#pragma once
// A runner's claim on its job, renewed as the run goes (the monitor calls
// Renew every quarter lease): the job's runner claim, which is the listing
// lease, and the leases on the objects it claimed. In a pool of runners the
// listing moves: a runner whose listing lease lapsed stops listing, and one
// that sees the listing runner gone takes the listing over. Outside a pool
// a lost claim means another runner took the job, and this run stops.
//
// Not thread-safe: the monitor thread's.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "state/state_store.h"

namespace ferry::migrate {

class JobLease {
 public:
  // `lists`: this runner holds the job's claim now (always, outside a pool).
  JobLease(state::StateStore& store, std::string job, std::string runner, std::chrono::milliseconds lease,
           bool pool, bool lists);

  struct Round {
    bool taken_over = false;     // not in a pool: another runner holds the job (`why` says so)
    bool listing_lost = false;   // in a pool: stop listing, another runner lists
    bool listing_taken = false;  // in a pool: the listing runner is gone; list now
    std::optional<int64_t> objects_until;  // the object leases now last until (ms)
    Status why;
  };
  // One renewal at `now_ms`; `job` is the job as last read (whether its
  // listing is done and who holds it).
  Round Renew(int64_t now_ms, const state::JobRecord& job);

  // Stopped early in a pool: lets the listing lease lapse now, so another
  // runner takes the listing at once. Nothing when this runner does not
  // list; a claim already lost or a job gone is not an error.
  Status GiveBackListing(int64_t now_ms);

  bool lists() const { return lists_; }
  int64_t until(int64_t now_ms) const { return now_ms + lease_.count(); }

 private:
  state::StateStore& store_;
  const std::string job_;
  const std::string runner_;
  const std::chrono::milliseconds lease_;
  const bool pool_;
  bool lists_;
};

}  // namespace ferry::migrate
