#include "migrate/transfer.h"

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "base/crash_point.h"
#include "base/strings.h"
#include "base/unix_time.h"
#include "crypto/digest.h"
#include "migrate/content_hash.h"
#include "migrate/upload_journal.h"
#include "ops/buffer_sink.h"
#include "ops/checksum_carry.h"
#include "ops/copy.h"
#include "ops/multipart_upload.h"
#include "ops/part_plan.h"
#include "ops/range_part_reader.h"

namespace ferry::migrate {
namespace {

// Objects uploaded in parts carry their source's MD5 as metadata
// (kFerryMd5Meta, content_hash.h), since their ETag is not an MD5:
// `--overwrite changed` and verify can then still compare contents.

TransferResult Failed(Status s, Side side) {
  TransferResult r;
  r.status = std::move(s);
  r.side = side;
  return r;
}

TransferResult Skipped(const char* reason) {
  TransferResult r;
  r.outcome = state::Outcome::kSkipped;
  r.skip_reason = reason;
  return r;
}

// Whether the object is still this runner's to write (LeaseFence).
Status MayWrite(const TransferContext& ctx, int64_t lease_until_ms) {
  if (ctx.fence == nullptr) return Status::Ok();
  return ctx.fence->Check(NowUnixMs(), lease_until_ms);
}

TransferResult Transferred(uint64_t bytes) {
  TransferResult r;
  r.outcome = state::Outcome::kTransferred;
  r.bytes = bytes;
  return r;
}

// Destination state for the overwrite decision; nullopt when absent.
Result<std::optional<DstObject>> LookAtDestination(const TransferContext& ctx,
                                                   const std::string& dst_key) {
  auto head = ctx.dst->Head(dst_key);
  if (!head.ok()) {
    if (head.status().code() == ErrorCode::kNotFound) return std::optional<DstObject>();
    return head.status();
  }
  DstObject d;
  d.size = head->size;
  d.md5 = KnownMd5(*head);
  d.last_modified_ms = UnixMs(head->last_modified);
  return std::optional<DstObject>(d);
}

// After a whole-object GET of `got` into `data`: checks that every byte
// arrived, and gives the PUT's options.
//
// Integrity end to end, hashing each byte once, at the destination: when
// the source's ETag is its MD5 it becomes the upload's Content-MD5, so the
// destination refuses bytes that differ from what the source stored
// (BadDigest, a corruption: the object is read again), and the ETag it
// answers is checked against it too. Otherwise ferry hashes the bytes.
// The source's full-object checksum (x-amz-checksum-*) goes along too: a
// destination that keeps checksums compares it (BadDigest) and keeps it.
Result<PutOptions> PutAfterGet(const ObjectInfo& got, std::string_view data) {
  if (data.size() != got.size) {
    return Status::Corruption("read " + std::to_string(data.size()) + " of " +
                              std::to_string(got.size) + " bytes from the source");
  }
  PutOptions put;
  put.headers = got.headers;
  put.checksum = got.checksum;  // the destination compares it, where it takes checksums
  std::string md5 = BodyMd5(got);
  put.content_md5 = !md5.empty() ? ContentMd5FromHex(md5) : Base64Encode(Md5(data));
  return put;
}

TransferResult CopySmall(const TransferContext& ctx, const std::string& key,
                         const std::string& dst_key, uint64_t listed_size, int64_t lease_until_ms) {
  BudgetHold hold(ctx.budget, listed_size);
  BufferSink buf(ctx.bwlimit, ctx.buffers, static_cast<size_t>(listed_size), /*hash_md5=*/false);
  auto got = ctx.src->Get(key, GetOptions{}, buf);
  if (!got.ok()) return Failed(got.status(), Side::kSource);
  auto put = PutAfterGet(*got, buf.data());
  if (!put.ok()) return Failed(put.status(), Side::kSource);
  if (Status s = MayWrite(ctx, lease_until_ms); !s.ok()) return Failed(s, Side::kState);
  ViewSource body(buf.data());
  auto stored = ctx.dst->Put(dst_key, body, got->size, *put);
  if (!stored.ok()) return Failed(stored.status(), Side::kDestination);
  CrashPoint("transfer");
  return Transferred(got->size);
}

// CopySmall() in flight on the stores' event loops: what it holds until
// `done`.
struct SmallCopy {
  SmallCopy(const TransferContext& ctx, uint64_t size, uint64_t budget_taken)
      : hold(ctx.budget, budget_taken, BudgetHold::Adopt{}) {
    buf.emplace(ctx.bwlimit, ctx.buffers, static_cast<size_t>(size), /*hash_md5=*/false);
  }
  // Frees the buffer and gives its bytes back to the budget, then calls
  // `done`: whatever `done` starts next finds them free, and memory never
  // holds more than the budget says.
  void Finish(TransferResult r) {
    body.reset();
    buf.reset();
    hold.Release();
    done(std::move(r));
  }
  BudgetHold hold;
  std::optional<BufferSink> buf;
  std::optional<ViewSource> body;
  std::string dst_key;
  std::function<void(TransferResult)> done;
};

// A multipart copy through ops/multipart_upload.h: parts read as ranges of
// the version HEAD saw, the upload journaled in the state store for resume.
TransferResult CopyMultipart(const TransferContext& ctx, const std::string& key,
                             const std::string& dst_key, int64_t lease_until_ms) {
  auto info = ctx.src->Head(key);
  if (!info.ok()) return Failed(info.status(), Side::kSource);
  PartPolicy policy;
  policy.threshold = ctx.spec.multipart_threshold;
  policy.part_size = ctx.spec.part_size;
  PartPlan plan = PlanParts(info->size, Limited(policy, ctx.dst->Features()));
  if (!plan.multipart) {  // shrank since listed
    return CopySmall(ctx, key, dst_key, info->size, lease_until_ms);
  }
  PutOptions put;
  put.headers = info->headers;
  put.checksum = MultipartChecksumFor(info->checksum);
  std::string md5 = KnownMd5(*info);
  if (!md5.empty()) put.headers.user[kFerryMd5Meta] = md5;
  MultipartOptions o;
  o.concurrency = ctx.spec.part_concurrency;
  o.budget = ctx.budget;
  o.whole_md5 = md5;  // end to end, when the source's MD5 is known
  RangePartReader parts(*ctx.src, key, info->etag, ctx.bwlimit, ctx.buffers);
  StateUploadJournal journal(ctx, key, dst_key, info->etag, plan.part_size, lease_until_ms);
  MultipartOutcome out =
      UploadMultipart(*ctx.dst, dst_key, info->size, plan, put, parts, journal, o);
  if (!out.status.ok()) return Failed(out.status, SideOf(out.step));
  if (Status s = CheckCarriedChecksum(info->checksum, *ctx.dst, dst_key); !s.ok()) {
    return Failed(s, Side::kDestination);
  }
  CrashPoint("transfer");
  return Transferred(info->size);
}

}  // namespace

const char* ToString(Side s) {
  switch (s) {
    case Side::kSource:
      return "source";
    case Side::kDestination:
      return "destination";
    case Side::kState:
      return "state store";
  }
  return "?";
}

Status AbandonUpload(const TransferContext& ctx, const std::string& key) {
  auto rec = ctx.state->GetUpload(ctx.job, key);
  if (!rec.ok()) return rec.status();
  if (!*rec) return Status::Ok();
  std::string dst_key = ctx.keys.DstKey(key);
  std::vector<std::string> ids;
  if (!(*rec)->upload_id.empty()) {
    ids.push_back((*rec)->upload_id);
  } else {
    FERRY_ASSIGN_OR_RETURN(auto open, ctx.dst->ListMultipartUploads(dst_key));
    for (const UploadInfo& u : open) {
      if (UnixMs(u.initiated) >= ctx.job_started_ms - kUploadClockSlackMs)
        ids.push_back(u.upload_id);
    }
  }
  for (const std::string& id : ids) {
    Status aborted = ctx.dst->AbortMultipart(dst_key, id);
    if (!aborted.ok() && aborted.code() != ErrorCode::kNotFound) return aborted;
  }
  return ctx.state->DeleteUpload(ctx.job, key);
}

bool CanTransferAsync(const TransferContext& ctx, const state::ClaimedObject& claimed) {
  // A bandwidth limit makes its reader wait for tokens, which must not
  // happen on an event loop: such jobs copy on threads.
  bool paced = ctx.bwlimit != nullptr && !ctx.bwlimit->unlimited();
  return ctx.src->Async() != nullptr && ctx.dst->Async() != nullptr && !ctx.spec.dry_run &&
         !paced && !(ctx.same_store && ctx.spec.server_side_copy) &&
         claimed.object.size < ctx.spec.multipart_threshold &&
         (claimed.force ||
          !NeedDestinationCheck(ctx.spec.overwrite, ctx.spec.dst_empty_at_start, claimed.claims));
}

bool NeedsThreadRoute(const TransferResult& r) { return IsOverCapacity(r.status); }

void TransferObjectAsync(const TransferContext& ctx, const state::ClaimedObject& claimed,
                         uint64_t budget_taken, std::function<void(TransferResult)> done) {
  const state::ListedObject& obj = claimed.object;
  auto op = std::make_shared<SmallCopy>(ctx, obj.size, budget_taken);
  op->dst_key = ctx.keys.DstKey(obj.key);
  op->done = std::move(done);
  const int64_t lease_until_ms = claimed.lease_until_ms;
  ctx.src->Async()->GetAsync(
      obj.key, GetOptions{}, *op->buf, [&ctx, op, lease_until_ms](Result<ObjectInfo> got) {
        if (!got.ok()) return op->Finish(Failed(got.status(), Side::kSource));
        auto put = PutAfterGet(*got, op->buf->data());
        if (!put.ok()) return op->Finish(Failed(put.status(), Side::kSource));
        if (Status s = MayWrite(ctx, lease_until_ms); !s.ok()) {
          return op->Finish(Failed(s, Side::kState));
        }
        op->body.emplace(op->buf->data());
        uint64_t size = got->size;
        ctx.dst->Async()->PutAsync(
            op->dst_key, *op->body, size, *put, [op, size](Result<ObjectInfo> stored) {
              if (!stored.ok()) {
                return op->Finish(Failed(stored.status(), Side::kDestination));
              }
              CrashPoint("transfer");
              op->Finish(Transferred(size));
            });
      });
}

TransferResult TransferObject(const TransferContext& ctx, const state::ClaimedObject& claimed) {
  const state::ListedObject& obj = claimed.object;
  std::string dst_key = ctx.keys.DstKey(obj.key);
  // A forced key (verify --fix) is copied whatever the destination holds.
  if (!claimed.force &&
      NeedDestinationCheck(ctx.spec.overwrite, ctx.spec.dst_empty_at_start, claimed.claims)) {
    auto dst = LookAtDestination(ctx, dst_key);
    if (!dst.ok()) return Failed(dst.status(), Side::kDestination);
    std::string src_md5 = IsMd5Hex(obj.etag) ? AsciiLower(obj.etag) : "";
    if (obj.etag.empty() && *dst && (*dst)->size == obj.size &&
        ctx.spec.overwrite == Overwrite::kChanged) {
      // The listing did not give an MD5 (a local file without a sidecar):
      // ask the source for one before deciding.
      auto head = ctx.src->Head(obj.key);
      if (!head.ok()) return Failed(head.status(), Side::kSource);
      src_md5 = KnownMd5(*head);
    }
    OverwriteVerdict v =
        DecideOverwrite(ctx.spec.overwrite, obj.size, src_md5, obj.last_modified_ms, *dst,
                        claimed.claims > 1, ctx.job_started_ms);
    if (v.decision == Decision::kSkip) return Skipped(v.reason);
  }
  if (ctx.spec.dry_run) return Transferred(obj.size);
  if (ctx.same_store && ctx.spec.server_side_copy &&
      obj.size <= ctx.dst->Features().max_single_put) {
    if (Status s = MayWrite(ctx, claimed.lease_until_ms); !s.ok()) return Failed(s, Side::kState);
    auto copied = ctx.dst->Copy(obj.key, dst_key, std::nullopt);
    if (!copied.ok()) return Failed(copied.status(), Side::kDestination);
    if (IsMd5Hex(obj.etag) && IsMd5Hex(copied->etag) &&
        AsciiLower(obj.etag) != AsciiLower(copied->etag)) {
      return Failed(Status::Corruption("server-side copy's ETag differs from the source's"),
                    Side::kDestination);
    }
    CrashPoint("transfer");
    return Transferred(obj.size);
  }
  if (obj.size >= ctx.spec.multipart_threshold && ctx.dst->Features().multipart) {
    return CopyMultipart(ctx, obj.key, dst_key, claimed.lease_until_ms);
  }
  TransferResult r = CopySmall(ctx, obj.key, dst_key, obj.size, claimed.lease_until_ms);
  if (IsOverCapacity(r.status)) {
    // Rewritten larger since the listing: take the route its size needs now.
    auto head = ctx.src->Head(obj.key);
    if (!head.ok()) return Failed(head.status(), Side::kSource);
    if (head->size >= ctx.spec.multipart_threshold && ctx.dst->Features().multipart) {
      return CopyMultipart(ctx, obj.key, dst_key, claimed.lease_until_ms);
    }
    return CopySmall(ctx, obj.key, dst_key, head->size, claimed.lease_until_ms);
  }
  return r;
}

}  // namespace ferry::migrate
