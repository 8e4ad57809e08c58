#include "migrate/upload_journal.h"

#include <spdlog/spdlog.h>

#include "base/crash_point.h"
#include "base/unix_time.h"

namespace ferry::migrate {

Result<std::optional<UploadInProgress>> StateUploadJournal::Begin() {
  FERRY_ASSIGN_OR_RETURN(std::optional<state::UploadRecord> rec,
                         ctx_.state->GetUpload(ctx_.job, key_));
  if (rec && !rec->upload_id.empty() && rec->src_etag == src_etag_ &&
      rec->part_size == part_size_) {
    UploadInProgress resume;  // keep the parts already there
    resume.upload_id = rec->upload_id;
    for (const auto& p : rec->parts) resume.parts.push_back(PartInfo{p.number, p.etag, p.size});
    return std::optional<UploadInProgress>(std::move(resume));
  }
  if (rec) FERRY_RETURN_IF_ERROR(Discard(*rec));
  // The intent first (no id yet): a crash after the create but before its
  // id is saved leaves a record that says to look for it.
  FERRY_RETURN_IF_ERROR(ctx_.state->SaveUpload(ctx_.job, key_, Fresh()));
  return std::optional<UploadInProgress>();
}

Status StateUploadJournal::Discard(const state::UploadRecord& stale) {
  // From another version of the source, another plan, or only an intent (a
  // crash around the create): nothing of it is kept.
  Status s = AbandonUpload(ctx_, key_);
  if (s.ok()) return s;
  // The abort is best effort (an upload left behind costs storage, not
  // correctness; a lifecycle rule can reap it): say so when a crash's
  // upload could not even be looked for.
  if (stale.upload_id.empty()) {
    spdlog::warn("migrate: {}: could not look for an upload a crash may have left: {}", dst_key_,
                 s.ToString());
  }
  return ctx_.state->DeleteUpload(ctx_.job, key_);
}

state::UploadRecord StateUploadJournal::Fresh() const {
  state::UploadRecord r;
  r.src_etag = src_etag_;
  r.part_size = part_size_;
  return r;
}

Status StateUploadJournal::Created(std::string_view upload_id) {
  CrashPoint("multipart-created");
  state::UploadRecord r = Fresh();
  r.upload_id = std::string(upload_id);
  return ctx_.state->SaveUpload(ctx_.job, key_, r);
}

Status StateUploadJournal::PartDone(const PartInfo& part) {
  FERRY_RETURN_IF_ERROR(ctx_.state->AddPart(ctx_.job, key_, {part.number, part.etag, part.size}));
  CrashPoint("part");
  return Status::Ok();
}

Status StateUploadJournal::MayComplete() {
  if (ctx_.fence == nullptr) return Status::Ok();
  return ctx_.fence->Check(NowUnixMs(), lease_until_ms_);
}

Status StateUploadJournal::Abandon(ObjectStore& /*dst*/, std::string_view /*key*/,
                                   std::string_view /*upload_id*/) {
  return AbandonUpload(ctx_, key_);  // the recorded upload: this one
}

Side SideOf(UploadStep step) {
  switch (step) {
    case UploadStep::kJournal:
    case UploadStep::kPermit:
      return Side::kState;
    case UploadStep::kRead:
    case UploadStep::kVerify:
      return Side::kSource;
    case UploadStep::kCreate:
    case UploadStep::kSend:
    case UploadStep::kComplete:
      return Side::kDestination;
  }
  return Side::kDestination;
}

}  // namespace ferry::migrate
