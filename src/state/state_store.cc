#include "state/state_store.h"

#include "state/pg_state_store.h"

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

Status CheckClaimArguments(const std::string& owner, int64_t now_ms, int64_t lease_until_ms) {
  if (owner.empty()) return Status::InvalidArgument("claim owner is empty");
  if (lease_until_ms <= now_ms || lease_until_ms <= 0) {
    return Status::InvalidArgument("claim lease must end after now");
  }
  return Status::Ok();
}

namespace {
bool StartsWith(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
}  // namespace

bool IsPostgresLocation(const std::string& location) {
  return StartsWith(location, "postgres:") || StartsWith(location, "postgresql:");
}

std::string PostgresConninfo(const std::string& location) {
  if (StartsWith(location, "postgres://") || StartsWith(location, "postgresql://")) return location;
  if (StartsWith(location, "postgresql:")) return location.substr(11);
  if (StartsWith(location, "postgres:")) return location.substr(9);
  return location;
}

Result<std::unique_ptr<StateStore>> OpenPgStateStore(const std::string& conninfo) {
  return PgStateStore::Open(conninfo);
}

}  // namespace ferry::state
