#pragma once
// One multipart upload of an object, the one both `ferry cp` (ops/copy.h)
// and `ferry migrate` (migrate/transfer.h) use: create the upload (or
// continue one), send the parts of a PartPlan several at once, each read
// and each send retried through engine/retry.h, then complete it, or give
// it up on failure.
//
// What differs between callers comes in through two narrow interfaces:
//   - a PartReader says where a part's bytes come from (a range of a local
//     file, a ranged GET of a source object into a buffer: RangePartReader);
//   - an UploadJournal records the upload's progress where a crashed or
//     retried run finds it (migrate: the job's state store), and may refuse
//     the completion (migrate's lease fence). The default journal records
//     nothing: a one-shot upload, aborted on any failure.
//
// Contract:
//   - Parts are numbered 1..plan.parts; every part but the last has
//     plan.part_size bytes. Parts the journal reports finished are not
//     read or sent again.
//   - A part takes `budget` bytes for its size before it is read, and only
//     after the parts before it took theirs (so parts of several uploads
//     waiting for one another can never hold the whole budget between
//     them), and holds them until it is sent.
//   - A read that fails before its bytes are handed over is read again; a
//     send is sent again from the same bytes (ByteSource::Rewind). Only
//     retryable errors are retried, up to `retry.max_attempts` tries each,
//     with backoff; a cancellation or another part's failure stops them.
//   - After the first failure no new part starts. What becomes of the
//     upload then is DecideAfterFailure's answer: a one-shot upload is
//     always abandoned (aborted); a resumable journal keeps it when the
//     failure may pass (retryable, or cancelled), so the next run continues.
//   - With `whole_md5` set and every part read in this run, the parts'
//     bytes are hashed in part order and must give it (the parts' own MD5s
//     only prove what reached the destination); else the upload is
//     abandoned and nothing completes.
//   - A completed object whose multipart ETag ("...-N") is not the one its
//     parts' MD5s give is reported as kCorruption.
// Thread-safety: UploadMultipart blocks; it calls the reader and the
// journal's PartDone from up to `concurrency` threads at once.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/byte_budget.h"
#include "engine/retry.h"
#include "ops/part_plan.h"
#include "store/object_store.h"

namespace ferry {

// One part of a plan: its number (1-based), first byte and length.
struct PartSpan {
  int number = 1;
  uint64_t offset = 0;
  uint64_t size = 0;
};

// Part `number` of `plan` for an object of `size` bytes. Pure.
PartSpan SpanOf(const PartPlan& plan, uint64_t size, int number);

// Sends one part: `body` holds exactly its bytes and can be rewound;
// `content_md5` is their base64 MD5, or "" when the reader did not hash them.
using PartSend = std::function<Status(ByteSource& body, std::string_view content_md5)>;

// Where the parts' bytes come from. Called from several threads at once.
class PartReader {
 public:
  virtual ~PartReader() = default;
  // Reads `part` and calls `send` once with its bytes (valid until send
  // returns); returns what send returned. An error returned without calling
  // send is the read's own, and the uploader may call Read again.
  virtual Status Read(const PartSpan& part, const PartSend& send) = 0;
};

// An upload already under way that the journal says to continue.
struct UploadInProgress {
  std::string upload_id;
  std::vector<PartInfo> parts;  // the parts it has (any order)
};

// What a caller records around an upload. The defaults: a one-shot upload.
class UploadJournal {
 public:
  virtual ~UploadJournal() = default;
  // Called first: the upload to continue, or nullopt to create a new one (a
  // resumable journal records its intent to create one before answering).
  virtual Result<std::optional<UploadInProgress>> Begin() {
    return std::optional<UploadInProgress>();
  }
  // After CreateMultipart gave `upload_id`; an error aborts that upload.
  virtual Status Created(std::string_view /*upload_id*/) { return Status::Ok(); }
  // After each part has landed; called from several threads at once.
  virtual Status PartDone(const PartInfo& /*part*/) { return Status::Ok(); }
  // Just before CompleteMultipart: an error stops the upload there.
  virtual Status MayComplete() { return Status::Ok(); }
  // Gives the upload up for good: aborts it (and forgets it, for a journal
  // that recorded it).
  virtual Status Abandon(ObjectStore& dst, std::string_view key, std::string_view upload_id) {
    return dst.AbortMultipart(key, upload_id);
  }
  // Whether an upload that failed in a way that may pass is kept for a
  // later run (which Begin() then returns) rather than abandoned.
  virtual bool Resumable() const { return false; }
};

// Where an upload failed.
enum class UploadStep {
  kJournal,   // the journal failed (Begin, Created, PartDone)
  kCreate,    // CreateMultipart
  kRead,      // reading a part from its source
  kSend,      // UploadPart
  kVerify,    // the parts' bytes do not give whole_md5
  kPermit,    // the journal refused the completion (MayComplete)
  kComplete,  // CompleteMultipart, or the completed object's ETag
};
const char* ToString(UploadStep s);

enum class AfterFailure { kKeep, kAbandon };
// What becomes of an upload after a failure `s` at `step`. Pure.
//   - not resumable: abandon, always;
//   - the bytes read do not add up (kVerify): abandon;
//   - the completion refused (kPermit), or cancelled: keep;
//   - not found, other than at the source: the upload itself is gone:
//     abandon (its record; the next attempt starts a new one);
//   - otherwise keep what a retry may mend (retryable), abandon the rest.
AfterFailure DecideAfterFailure(bool resumable, UploadStep step, const Status& s);

struct MultipartOptions {
  int concurrency = 8;  // parts in flight
  // Each part's read, and its send, apart: tries and backoff for retryable
  // errors, on top of the stores' own per-request retries.
  RetryPolicy retry{3, std::chrono::milliseconds(200), std::chrono::milliseconds(2000),
                    std::chrono::milliseconds(30'000)};
  ByteBudget* budget = nullptr;  // bytes held per part in flight; null: unbounded
  std::string whole_md5;         // lower-case hex, or "": no end-to-end check
};

struct MultipartOutcome {
  Status status;
  UploadStep step = UploadStep::kComplete;  // where it failed, when it did
  ObjectInfo object;                        // the completed object
  int parts_sent = 0;                       // parts sent in this call
};

// Uploads `size` bytes to `key` in `dst` as the multipart upload `plan`
// describes (plan.multipart must be true), with `put`'s headers. A failure
// says its step; a resumable upload found gone (kNotFound) is reported as
// kPreconditionFailed, its record abandoned: the next attempt starts anew.
MultipartOutcome UploadMultipart(ObjectStore& dst, std::string_view key, uint64_t size,
                                 const PartPlan& plan, const PutOptions& put, PartReader& reader,
                                 UploadJournal& journal, const MultipartOptions& options);

}  // namespace ferry
