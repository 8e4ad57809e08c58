#include "migrate/transfer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "base/cancel.h"
#include "base/crash_point.h"
#include "base/unix_time.h"
#include "base/strings.h"
#include "crypto/digest.h"
#include "migrate/content_hash.h"
#include "engine/parallel.h"
#include "ops/copy.h"
#include "ops/part_plan.h"

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

// Status of a source object that is larger than its listing said: the
// caller looks again and picks the route for its real size.
constexpr char kGrew[] = "the object grew since it was listed";

// Buffers a body, paced by the job's bandwidth limit, and never beyond `cap`
// bytes (the size the budget was reserved for). Hashes it as it streams
// when `hash_md5` is set. Lends its memory to the reader, so a body goes
// from the socket into it and from it to the next socket without a copy.
class BufferSink : public ByteSink {
 public:
  BufferSink(const TransferContext& ctx, size_t cap, bool hash_md5)
      : limit_(ctx.bwlimit), cap_(cap), data_(BufferPool::Take(ctx.buffers, cap)) {
    if (hash_md5) md5_.emplace(StreamingDigest::Kind::kMd5);
  }
  Status Write(std::string_view d) override {
    char* at = Lend(d.size());
    if (at == nullptr) return Status(ErrorCode::kPreconditionFailed, kGrew);
    std::memcpy(at, d.data(), d.size());
    return Commit(d.size());
  }
  char* Lend(size_t n) override { return size_ + n > cap_ ? nullptr : data_.data() + size_; }
  Status Commit(size_t n) override {
    if (CancelRequested()) return CancelledStatus();
    if (limit_ != nullptr && !limit_->unlimited() && !limit_->Take(static_cast<double>(n))) {
      return CancelledStatus();
    }
    if (md5_) md5_->Update(std::string_view(data_.data() + size_, n));
    size_ += n;
    return Status::Ok();
  }
  std::string_view data() const { return {data_.data(), size_}; }
  // Raw MD5 of what was written; only with `hash_md5`.
  std::string Md5Raw() { return md5_->Finish(); }

 private:
  RateLimiter* limit_;
  std::optional<StreamingDigest> md5_;  // only when asked to hash
  size_t cap_;
  BufferPool::Lease data_;
  size_t size_ = 0;
};

// Lets the tasks of one object pass a point in task order (0, 1, ...),
// whatever order their threads get there in. Abort() — a task failed, or
// the job is cancelled — releases every waiter.
class Turns {
 public:
  // Waits for every task before `i` to Pass(); false when aborted.
  bool Wait(int i) {
    std::unique_lock<std::mutex> lock(mu_);
    while (!aborted_ && next_ != i) {
      if (cv_.wait_for(lock, std::chrono::milliseconds(200)) == std::cv_status::timeout &&
          CancelRequested()) {
        aborted_ = true;
        cv_.notify_all();
      }
    }
    return !aborted_;
  }
  void Pass() {
    std::lock_guard<std::mutex> lock(mu_);
    ++next_;
    cv_.notify_all();
  }
  void Abort() {
    std::lock_guard<std::mutex> lock(mu_);
    aborted_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int next_ = 0;
  bool aborted_ = false;
};

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
Result<PutOptions> PutAfterGet(const ObjectInfo& got, std::string_view data) {
  if (data.size() != got.size) {
    return Status::Corruption("read " + std::to_string(data.size()) + " of " +
                              std::to_string(got.size) + " bytes from the source");
  }
  PutOptions put;
  put.headers = got.headers;
  std::string md5 = BodyMd5(got);
  put.content_md5 = !md5.empty() ? ContentMd5FromHex(md5) : Base64Encode(Md5(data));
  return put;
}

TransferResult CopySmall(const TransferContext& ctx, const std::string& key,
                         const std::string& dst_key, uint64_t listed_size,
                         int64_t lease_until_ms) {
  BudgetHold hold(ctx.budget, listed_size);
  BufferSink buf(ctx, static_cast<size_t>(listed_size), /*hash_md5=*/false);
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
    buf.emplace(ctx, static_cast<size_t>(size), /*hash_md5=*/false);
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

  auto rec = ctx.state->GetUpload(ctx.job, key);
  if (!rec.ok()) return Failed(rec.status(), Side::kState);
  state::UploadRecord upload;
  if (*rec && !(*rec)->upload_id.empty() && (*rec)->src_etag == info->etag &&
      (*rec)->part_size == plan.part_size) {
    upload = **rec;  // resume: keep the parts already there
  } else {
    if (*rec) {
      // From another version of the source, another plan, or only an
      // intent (a crash around the create): nothing of it is kept.
      if (Status s = AbandonUpload(ctx, key); !s.ok()) {
        // The abort is best effort (an upload left behind costs storage,
        // not correctness; a lifecycle rule can reap it): say so when a
        // crash's upload could not even be looked for.
        if ((*rec)->upload_id.empty()) {
          spdlog::warn("migrate: {}: could not look for an upload a crash may have left: {}", dst_key,
                       s.ToString());
        }
        if (Status d = ctx.state->DeleteUpload(ctx.job, key); !d.ok()) return Failed(d, Side::kState);
      }
    }
    upload.src_etag = info->etag;
    upload.part_size = plan.part_size;
    // The intent first (no id yet): a crash after the create below but
    // before its id is saved leaves a record that says to look for it.
    if (Status s = ctx.state->SaveUpload(ctx.job, key, upload); !s.ok()) return Failed(s, Side::kState);
    PutOptions put;
    put.headers = info->headers;
    std::string md5 = KnownMd5(*info);
    if (!md5.empty()) put.headers.user[kFerryMd5Meta] = md5;
    auto id = ctx.dst->CreateMultipart(dst_key, put);
    if (!id.ok()) return Failed(id.status(), Side::kDestination);
    CrashPoint("multipart-created");
    upload.upload_id = *id;
    if (Status s = ctx.state->SaveUpload(ctx.job, key, upload); !s.ok()) {
      (void)ctx.dst->AbortMultipart(dst_key, *id);
      return Failed(s, Side::kState);
    }
  }

  std::map<int, PartInfo> done;
  for (const auto& p : upload.parts) done[p.number] = PartInfo{p.number, p.etag, p.size};
  std::vector<int> todo;
  for (int n = 1; n <= plan.parts; ++n) {
    if (!done.count(n)) todo.push_back(n);
  }
  // End to end: when the source's MD5 is known and every part is copied in
  // this run, the parts' bytes are hashed in order and must give it (the
  // parts' own MD5s only prove what reached the destination). A resumed
  // upload has parts from an earlier run that are not read again; those
  // rest on their Content-MD5 alone.
  //
  // A part takes its buffer from the job's budget only after the parts
  // before it took theirs: one waiting for its turn to be hashed then
  // always has its predecessors holding buffers too (or done), so parts of
  // several objects can never hold the whole budget while waiting for a
  // part that waits for the budget.
  std::string want_md5 = KnownMd5(*info);
  bool verify = !want_md5.empty() && done.empty();
  StreamingDigest whole(StreamingDigest::Kind::kMd5);
  Turns budget_turns, hash_turns;
  std::mutex mu;
  Side failed_side = Side::kSource;
  Status first_failure;  // the error that stopped the parts, when one did
  bool failed = false;
  Status s = RunParallel(static_cast<int>(todo.size()), ctx.spec.part_concurrency, [&](int i) {
    int n = todo[static_cast<size_t>(i)];
    uint64_t off = static_cast<uint64_t>(n - 1) * plan.part_size;
    uint64_t len = std::min(plan.part_size, info->size - off);
    if (!budget_turns.Wait(i)) return CancelledStatus();  // another part failed, or cancelled
    BudgetHold hold(ctx.budget, len);
    budget_turns.Pass();
    BufferSink buf(ctx, static_cast<size_t>(len), /*hash_md5=*/true);
    GetOptions g;
    g.range = ByteRange{off, len};
    g.if_match = info->etag;
    auto got = ctx.src->Get(key, g, buf);
    auto fail = [&](Status st, Side side) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!failed) {
          failed_side = side;
          first_failure = st;
        }
        failed = true;
      }
      budget_turns.Abort();  // waiters return after this is recorded
      hash_turns.Abort();
      return st;
    };
    if (!got.ok()) return fail(got.status(), Side::kSource);
    if (buf.data().size() != len) {
      return fail(Status::Corruption("short range from the source"), Side::kSource);
    }
    if (verify) {
      if (!hash_turns.Wait(i)) return CancelledStatus();
      whole.Update(buf.data());
      hash_turns.Pass();
    }
    std::string md5 = buf.Md5Raw();
    ViewSource body(buf.data());
    auto part = ctx.dst->UploadPart(dst_key, upload.upload_id, n, body, len, Base64Encode(md5));
    if (!part.ok()) return fail(part.status(), Side::kDestination);
    if (Status st = ctx.state->AddPart(ctx.job, key, {n, part->etag, len}); !st.ok()) {
      return fail(st, Side::kState);
    }
    CrashPoint("part");
    std::lock_guard<std::mutex> lock(mu);
    done[n] = *part;
    return Status::Ok();
  });
  // After a failure: keep the upload for the next attempt (a transient
  // error, or a cancellation — resume continues it), forget it when it can
  // never complete. An upload the destination no longer has (NoSuchUpload:
  // aborted by a lifecycle rule, say) is not the object's fault: its next
  // attempt starts a new one.
  auto give_up = [&](Status st, Side side) -> TransferResult {
    if (st.code() == ErrorCode::kCancelled) return Failed(st, side);
    if (st.code() == ErrorCode::kNotFound && side != Side::kSource) {
      (void)AbandonUpload(ctx, key);
      return Failed(Status(ErrorCode::kPreconditionFailed,
                           "multipart upload " + upload.upload_id +
                               " is gone at the destination (" + st.ToString() +
                               "); the next attempt starts a new one"),
                    side);
    }
    if (!st.retryable()) (void)AbandonUpload(ctx, key);
    return Failed(st, side);
  };
  if (!s.ok()) {
    std::lock_guard<std::mutex> lock(mu);
    return give_up(failed ? first_failure : s, failed_side);
  }
  if (verify && HexLower(whole.Finish()) != want_md5) {
    // Read wrong from the source: this upload must not complete.
    (void)AbandonUpload(ctx, key);
    return Failed(Status::Corruption("the parts read from the source do not add up to its MD5 " +
                                     want_md5),
                  Side::kSource);
  }
  std::vector<PartInfo> parts;
  for (auto& [n, p] : done) parts.push_back(p);
  // The parts stay (the upload is kept for whoever completes it).
  if (Status s = MayWrite(ctx, lease_until_ms); !s.ok()) return Failed(s, Side::kState);
  auto complete = ctx.dst->CompleteMultipart(dst_key, upload.upload_id, parts);
  if (!complete.ok()) return give_up(complete.status(), Side::kDestination);
  // What S3 (and ferry's stores) answer for an upload of exactly these parts.
  std::vector<std::string> part_md5s;
  for (const auto& p : parts) part_md5s.push_back(p.etag);
  std::string expect = MultipartEtag(part_md5s);
  if (complete->etag.find('-') != std::string::npos && AsciiLower(complete->etag) != expect) {
    return Failed(Status::Corruption("completed object's ETag " + complete->etag +
                                     " does not match its parts (" + expect + ")"),
                  Side::kDestination);
  }
  CrashPoint("transfer");
  return Transferred(info->size);
}

}  // namespace

const char* ToString(Side s) {
  switch (s) {
    case Side::kSource: return "source";
    case Side::kDestination: return "destination";
    case Side::kState: return "state store";
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
      if (UnixMs(u.initiated) >= ctx.job_started_ms - kUploadClockSlackMs) ids.push_back(u.upload_id);
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
         !paced &&
         !(ctx.same_store && ctx.spec.server_side_copy) &&
         claimed.object.size < ctx.spec.multipart_threshold &&
         (claimed.force ||
          !NeedDestinationCheck(ctx.spec.overwrite, ctx.spec.dst_empty_at_start, claimed.claims));
}

bool NeedsThreadRoute(const TransferResult& r) {
  return r.status.code() == ErrorCode::kPreconditionFailed &&
         r.status.message().find(kGrew) != std::string::npos;
}

void TransferObjectAsync(const TransferContext& ctx, const state::ClaimedObject& claimed,
                         uint64_t budget_taken, std::function<void(TransferResult)> done) {
  const state::ListedObject& obj = claimed.object;
  auto op = std::make_shared<SmallCopy>(ctx, obj.size, budget_taken);
  op->dst_key = ctx.keys.DstKey(obj.key);
  op->done = std::move(done);
  const int64_t lease_until_ms = claimed.lease_until_ms;
  ctx.src->Async()->GetAsync(obj.key, GetOptions{}, *op->buf, [&ctx, op, lease_until_ms](
                                                                  Result<ObjectInfo> got) {
    if (!got.ok()) return op->Finish(Failed(got.status(), Side::kSource));
    auto put = PutAfterGet(*got, op->buf->data());
    if (!put.ok()) return op->Finish(Failed(put.status(), Side::kSource));
    if (Status s = MayWrite(ctx, lease_until_ms); !s.ok()) {
      return op->Finish(Failed(s, Side::kState));
    }
    op->body.emplace(op->buf->data());
    uint64_t size = got->size;
    ctx.dst->Async()->PutAsync(op->dst_key, *op->body, size, *put,
                               [op, size](Result<ObjectInfo> stored) {
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
  if (r.status.code() == ErrorCode::kPreconditionFailed &&
      r.status.message().find(kGrew) != std::string::npos) {
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
