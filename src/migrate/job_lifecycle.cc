#include "migrate/job_lifecycle.h"

namespace ferry::migrate {

std::optional<state::JobState> DecideJobEnd(const JobObservation& o) {
  if (o.pool && state::IsFinal(o.state)) return o.state;  // another runner of the pool ended it
  if (o.state == state::JobState::kCancelling) return state::JobState::kCancelled;
  if (o.listing_done && o.pending == 0 && o.in_flight == 0 && (!o.lists || o.listing_returned)) {
    return o.failed > 0 ? state::JobState::kFailed : state::JobState::kCompleted;
  }
  return std::nullopt;
}

Ending DecideEnding(bool taken_over, bool pool, std::optional<state::JobState> ended) {
  Ending e;
  if (taken_over) {
    e.kind = Ending::Kind::kNothing;
  } else if (pool && !ended) {
    e.kind = Ending::Kind::kLeaveToPool;
  } else {
    e.record = ended.value_or(state::JobState::kInterrupted);
    e.archive = state::IsFinal(e.record);
  }
  return e;
}

}  // namespace ferry::migrate
