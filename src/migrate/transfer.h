#pragma once
// Moves one object of a migration (rclone's operations layer, with the
// job's state store in the loop): decides copy or skip, copies by the
// cheapest safe route, and verifies what it wrote.
//
//   - server-side Copy when source and destination are one bucket;
//   - below the multipart threshold: one GET into a buffer, MD5 computed as
//     it streams and checked against the source's ETag, one PUT with
//     Content-MD5 (the store rejects damaged bytes, and its ETag is checked);
//   - at or above it: a multipart upload of equal parts (the one uploader,
//     ops/multipart_upload.h), each read with If-Match (one source
//     version), hashed and sent with Content-MD5 (ops/range_part_reader.h),
//     and recorded in the state store as it lands (upload_journal.h), so a
//     crashed or retried transfer resumes the upload instead of starting
//     over. The completed object's ETag is checked against the parts' MD5s.
//
// Memory: every buffer is taken from the job's ByteBudget first.
// Thread-safe: many workers call TransferObject at once.

#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"
#include "engine/buffer_pool.h"
#include "engine/byte_budget.h"
#include "engine/rate_limiter.h"
#include "migrate/job_spec.h"
#include "migrate/lease_fence.h"
#include "migrate/policy.h"
#include "state/state_store.h"
#include "store/object_store.h"

namespace ferry::migrate {

struct TransferContext {
  ObjectStore* src = nullptr;
  ObjectStore* dst = nullptr;
  state::StateStore* state = nullptr;
  std::string job;
  JobSpec spec;
  KeyMap keys;
  bool same_store = false;      // one bucket: server-side copy is possible
  int64_t job_started_ms = 0;
  RateLimiter* bwlimit = nullptr;  // bytes read from the source; may be null
  ByteBudget* budget = nullptr;    // may be null (unbounded)
  BufferPool* buffers = nullptr;   // recycles large buffers; may be null
  // Checked before every write to the destination (PUT, copy, completion of
  // a multipart upload) against the object's claim; null: write always.
  const LeaseFence* fence = nullptr;
};

enum class Side { kSource, kDestination, kState };
const char* ToString(Side s);

struct TransferResult {
  Status status;            // OK: outcome is set
  Side side = Side::kSource;  // which dependency failed
  state::Outcome outcome = state::Outcome::kTransferred;
  uint64_t bytes = 0;       // bytes written (0 for a skip)
  std::string skip_reason;  // for skips
};

TransferResult TransferObject(const TransferContext& ctx, const state::ClaimedObject& obj);

// Whether `obj` can take the asynchronous route: an object below the
// multipart threshold, between two stores with asynchronous Get and Put
// (S3), with no look at the destination to make first, in a real run that
// does not copy server-side, with no bandwidth limit.
bool CanTransferAsync(const TransferContext& ctx, const state::ClaimedObject& obj);

// TransferObject() for an object CanTransferAsync() accepts, as callbacks
// on the stores' event loops (one GET into a buffer, one PUT from it), so
// no thread waits for it. Returns at once. `budget_taken`: the bytes of
// ctx.budget the caller took for the object's buffer (its size; adopted,
// and given back before `done`). `done` is called once, on a store
// thread, and must not block. `ctx` must outlive it.
void TransferObjectAsync(const TransferContext& ctx, const state::ClaimedObject& obj,
                         uint64_t budget_taken, std::function<void(TransferResult)> done);

// True when a result of TransferObjectAsync() means the object must be
// copied by TransferObject() instead (it grew past its listed size).
bool NeedsThreadRoute(const TransferResult& r);

// Aborts the multipart upload recorded for `key`, if any, and forgets it:
// for objects given up on (dead-lettered, cancelled jobs) and uploads
// started over. A record without an upload id is an intent, saved before
// CreateMultipart: a crash may have followed the create before its id was
// saved, so every upload of the destination key that the destination
// initiated since the job started (less kUploadClockSlack for clocks that
// disagree) is aborted; an old upload of that key by someone else stays.
Status AbandonUpload(const TransferContext& ctx, const std::string& key);
inline constexpr int64_t kUploadClockSlackMs = 15 * 60 * 1000;

}  // namespace ferry::migrate
