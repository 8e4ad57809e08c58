#pragma once
// A run's lifecycle decisions as pure functions: when the monitor ends the
// run and in which state, and what the runner records once its threads are
// joined. The Runner gathers the facts; these decide (table-tested in
// job_lifecycle_test.cc).

#include <cstdint>
#include <optional>

#include "state/state_store.h"

namespace ferry::migrate {

// What the monitor knows at one of its rounds: the job as the state store
// has it, and this runner's own part.
struct JobObservation {
  state::JobState state = state::JobState::kRunning;
  bool listing_done = false;  // the store's flag: every shard listed
  int64_t pending = 0;        // keys not yet finished (all runners)
  int64_t failed = 0;         // keys in the dead-letter queue
  bool pool = false;          // one of a pool of runners
  bool lists = true;          // this runner holds the listing
  bool listing_returned = false;  // ...and its listing returned
  int64_t in_flight = 0;      // this runner's transfers still running
};

// nullopt: the run goes on. Else the state the job ends in: the one another
// runner of the pool gave it (a final state), kCancelled for a cancel that
// was asked, kFailed or kCompleted once everything listed is finished here
// and everywhere. A runner that lists ends the job only once its listing
// returned: a late finding (a broken listing promise) may still replace
// the listing.
std::optional<state::JobState> DecideJobEnd(const JobObservation& o);

// What the runner does once its threads are joined.
struct Ending {
  enum class Kind {
    kNothing,       // another runner holds the job now: its state is theirs
    kLeaveToPool,   // stopped early in a pool: give back the listing lease, if held
    kRecordState,   // record `record` (and archive it when final)
  };
  Kind kind = Kind::kRecordState;
  state::JobState record = state::JobState::kInterrupted;
  bool archive = false;
};
// `ended`: what DecideJobEnd returned, nullopt when the run stopped early
// (a signal, an error, the lease lost).
Ending DecideEnding(bool taken_over, bool pool, std::optional<state::JobState> ended);

}  // namespace ferry::migrate
