#include "migrate/cancel.h"

#include "base/unix_time.h"
#include "migrate/job_spec.h"
#include "migrate/policy.h"
#include "migrate/runner.h"
#include "migrate/transfer.h"
#include "store/location.h"

namespace ferry::migrate {
namespace {

// Aborts the job's open multipart uploads at its destination, as far as
// the destination can be reached.
void AbortUploads(state::StateStore& store, const state::JobRecord& job,
                  const std::function<OpenOptions(const std::string&)>& open_options) {
  auto uploads = store.ListUploads(job.id);
  if (!uploads.ok() || uploads->empty()) return;
  auto spec = SpecFromJson(job.spec);
  if (!spec.ok()) return;
  auto dst = ParseLocation(spec->dst);
  auto src = ParseLocation(spec->src);
  if (!dst.ok()) return;
  auto dstore = OpenStore(*dst, open_options(spec->dst_profile));
  if (!dstore.ok()) return;
  TransferContext ctx;
  ctx.dst = dstore->get();
  ctx.state = &store;
  ctx.job = job.id;
  if (src.ok()) ctx.keys = KeyMapFor(*src, *dst);
  for (const auto& [key, rec] : *uploads) (void)AbandonUpload(ctx, key);
}

}  // namespace

Result<CancelOutcome> CancelJob(state::StateStore& store, const std::string& id,
                                const std::function<OpenOptions(const std::string& profile)>& open_options) {
  FERRY_ASSIGN_OR_RETURN(state::JobRecord job, store.GetJob(id));
  if (state::IsFinal(job.state)) {
    return Status::InvalidArgument(std::string("is already ") + state::ToString(job.state));
  }
  const bool live = !job.runner.empty() && job.runner_until_ms > NowUnixMs() && !RunnerIsDead(job.runner);
  if (live) {
    FERRY_RETURN_IF_ERROR(store.SetJobState(id, state::JobState::kCancelling, NowUnixMs(), 0, false));
    return CancelOutcome::kAsked;
  }
  AbortUploads(store, job, open_options);
  FERRY_RETURN_IF_ERROR(store.SetJobState(id, state::JobState::kCancelled, NowUnixMs(), 0, true));
  FERRY_RETURN_IF_ERROR(store.ArchiveJob(id, NowUnixMs()).WithContext("cancelled, not archived"));
  return CancelOutcome::kCancelled;
}

}  // namespace ferry::migrate
