#pragma once
// A migrated object's multipart upload, journaled in the job's state store
// (state::UploadRecord) so that a crashed or retried transfer continues the
// upload instead of starting over: the UploadJournal that migrate gives
// ops/multipart_upload.h.
//
//   - Begin: an upload recorded for the same source version (ETag) and part
//     size is continued with the parts recorded; any other record (another
//     version, another plan, or only an intent) is abandoned first. Before a
//     new upload is created its intent (a record without an id) is saved, so
//     a crash between the create and saving its id leaves a record that
//     says to look for it (AbandonUpload lists and aborts it).
//   - Created / PartDone: the id, then each part as it lands.
//   - MayComplete: the object's lease fence (lease_fence.h); a refusal
//     keeps the parts for whoever completes the upload.
//   - Abandon: AbandonUpload (aborts, and forgets the record).
// Crash points (base/crash_point.h): "multipart-created" after the create,
// before its id is saved; "part" after each part is recorded.

#include <cstdint>
#include <optional>
#include <string>

#include "migrate/transfer.h"
#include "ops/multipart_upload.h"

namespace ferry::migrate {

class StateUploadJournal : public UploadJournal {
 public:
  // `key`: the source key the job records; `src_etag` and `part_size`: the
  // version and plan this transfer copies.
  StateUploadJournal(const TransferContext& ctx, std::string key, std::string dst_key,
                     std::string src_etag, uint64_t part_size, int64_t lease_until_ms)
      : ctx_(ctx),
        key_(std::move(key)),
        dst_key_(std::move(dst_key)),
        src_etag_(std::move(src_etag)),
        part_size_(part_size),
        lease_until_ms_(lease_until_ms) {}

  Result<std::optional<UploadInProgress>> Begin() override;
  Status Created(std::string_view upload_id) override;
  Status PartDone(const PartInfo& part) override;
  Status MayComplete() override;
  Status Abandon(ObjectStore& dst, std::string_view key, std::string_view upload_id) override;
  bool Resumable() const override { return true; }

 private:
  // A record that cannot be continued: abandoned, and forgotten.
  Status Discard(const state::UploadRecord& stale);
  state::UploadRecord Fresh() const;

  const TransferContext& ctx_;
  const std::string key_;
  const std::string dst_key_;
  const std::string src_etag_;
  const uint64_t part_size_;
  const int64_t lease_until_ms_;
};

// Which dependency a failure at `step` of a multipart upload is blamed on.
Side SideOf(UploadStep step);

}  // namespace ferry::migrate
