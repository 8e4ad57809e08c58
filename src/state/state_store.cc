#include "state/state_store.h"

namespace ferry::state {

const char* ToString(JobState s) {
  switch (s) {
    case JobState::kCreated: return "created";
    case JobState::kRunning: return "running";
    case JobState::kCompleted: return "completed";
    case JobState::kFailed: return "failed";
    case JobState::kCancelling: return "cancelling";
    case JobState::kCancelled: return "cancelled";
    case JobState::kInterrupted: return "interrupted";
  }
  return "unknown";
}

std::optional<JobState> JobStateFromString(const std::string& s) {
  for (JobState st : {JobState::kCreated, JobState::kRunning, JobState::kCompleted,
                      JobState::kFailed, JobState::kCancelling, JobState::kCancelled,
                      JobState::kInterrupted}) {
    if (s == ToString(st)) return st;
  }
  return std::nullopt;
}

}  // namespace ferry::state
