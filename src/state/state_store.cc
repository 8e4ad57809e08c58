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

const char* ToString(KeyMark m) {
  switch (m) {
    case KeyMark::kClaimed: return "claimed";
    case KeyMark::kCopied: return "copied";
    case KeyMark::kWritten: return "written";
    case KeyMark::kDeleted: return "deleted";
  }
  return "unknown";
}

// The gateway's marks are kept by the SQLite store only, so far.
namespace {
Status NoKeyMarks() {
  return Status::Unsupported(
      "this state store keeps no gateway marks (ferry gateway needs the SQLite state for now)");
}
}  // namespace

Result<KeyClaim> StateStore::ClaimKey(const std::string&, const std::string&, const std::string&,
                                      int64_t, int64_t, bool) {
  return NoKeyMarks();
}
Result<bool> StateStore::MarkKey(const std::string&, const std::string&, const std::string&,
                                 KeyMark, uint64_t, const std::string&, int64_t) {
  return NoKeyMarks();
}
Status StateStore::ReleaseKey(const std::string&, const std::string&, const std::string&) {
  return NoKeyMarks();
}
Result<std::map<std::string, KeyMark>> StateStore::KeyMarks(const std::string&,
                                                            const std::vector<std::string>&) {
  return NoKeyMarks();
}

Status StateStore::RecordKey(const std::string&, const std::string&, KeyMark, int64_t) {
  return NoKeyMarks();
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

Status CheckSplit(const ShardRecord& shard, const std::string& expect_upper,
                  const std::vector<std::string>& bounds) {
  const std::string where = "shard " + std::to_string(shard.shard);
  if (bounds.empty()) return Status::InvalidArgument("no split points for " + where);
  for (size_t i = 1; i < bounds.size(); ++i) {
    if (bounds[i] <= bounds[i - 1]) {
      return Status::InvalidArgument("split points for " + where + " are not ascending");
    }
  }
  auto changed = [&](const std::string& why) {
    return Status(ErrorCode::kPreconditionFailed, where + " cannot be split: " + why);
  };
  if (!shard.ranged) return changed("not a range shard");
  if (shard.done) return changed("it is done");
  if (shard.upper != expect_upper) return changed("its upper bound moved");
  if (bounds.front() <= shard.lower || bounds.front() <= shard.cursor) {
    return changed("it has listed past the split point");
  }
  if (!shard.upper.empty() && bounds.back() >= shard.upper) {
    return Status::InvalidArgument("split points for " + where + " are not below its upper bound");
  }
  return Status::Ok();
}

std::vector<ShardRecord> SplitOff(const ShardRecord& shard, const std::vector<std::string>& bounds,
                                  int first_id) {
  std::vector<ShardRecord> out;
  for (size_t i = 0; i < bounds.size(); ++i) {
    ShardRecord s;
    s.shard = first_id + static_cast<int>(i);
    s.prefix = shard.prefix;
    s.ranged = true;
    s.lower = bounds[i];
    s.upper = i + 1 < bounds.size() ? bounds[i + 1] : shard.upper;
    s.relist = shard.relist;
    out.push_back(std::move(s));
  }
  return out;
}

Status CheckFallBack(const JobRecord& job) {
  if (IsFinal(job.state)) {
    return Status(ErrorCode::kPreconditionFailed,
                  "job " + job.id + " is " + ToString(job.state) + ": its listing is over")
        .set_retryable(false);
  }
  if (job.counters.listed == 0 || job.counters.pending == 0) return Status::Ok();
  return Status(ErrorCode::kPreconditionFailed,
                "job " + job.id + " has " + std::to_string(job.counters.pending) +
                    " keys pending; they must finish before it relists")
      .set_retryable(true);
}

}  // namespace ferry::state
