#include "migrate/job_lease.h"

#include <utility>

namespace ferry::migrate {

JobLease::JobLease(state::StateStore& store, std::string job, std::string runner, std::chrono::milliseconds lease,
                   bool pool, bool lists)
    : store_(store), job_(std::move(job)), runner_(std::move(runner)), lease_(lease), pool_(pool), lists_(lists) {}

JobLease::Round JobLease::Renew(int64_t now_ms, const state::JobRecord& job) {
  Round r;
  const int64_t until = now_ms + lease_.count();
  if (lists_) {
    Status renewed = store_.RenewJob(job_, runner_, until);
    if (renewed.code() == ErrorCode::kPreconditionFailed) {
      if (!pool_) {
        r.taken_over = true;
        r.why = renewed.WithContext("job taken over by another runner");
        return r;
      }
      // Our lease lapsed and another runner of the pool lists now (it goes
      // on from the last committed page): stop ours.
      lists_ = false;
      r.listing_lost = true;
    }
  } else if (pool_ && !job.listing_done && (job.runner.empty() || job.runner_until_ms <= now_ms)) {
    if (store_.AcquireJob(job_, runner_, now_ms, until, false).ok()) {
      lists_ = true;
      r.listing_taken = true;
    }
  }
  if (store_.RenewLeases(job_, runner_, until).ok()) r.objects_until = until;
  return r;
}

Status JobLease::GiveBackListing(int64_t now_ms) {
  if (!lists_) return Status::Ok();
  Status gave = store_.RenewJob(job_, runner_, now_ms);
  if (gave.code() == ErrorCode::kPreconditionFailed || gave.code() == ErrorCode::kNotFound) return Status::Ok();
  return gave;
}

}  // namespace ferry::migrate
