#include "ops/multipart_upload.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "base/cancel.h"
#include "base/strings.h"
#include "crypto/checksum.h"
#include "crypto/digest.h"
#include "engine/parallel.h"

namespace ferry {
namespace {

// Lets the tasks of one upload pass a point in task order (0, 1, ...),
// whatever order their threads get there in. Abort() — a task failed, or
// the process is cancelled — releases every waiter.
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

// Feeds every byte of `body` to `update` (at once when it is in memory),
// then rewinds it.
template <class Update>
Status HashAll(ByteSource& body, Update&& update) {
  if (auto bytes = body.Contiguous()) {
    update(*bytes);
    return Status::Ok();
  }
  std::string buf(1 << 20, '\0');
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(size_t n, body.Read(buf.data(), buf.size()));
    if (n == 0) break;
    update(std::string_view(buf.data(), n));
  }
  return body.Rewind();
}

// One run of UploadMultipart: start, parts, completion or giving up.
class Uploader {
 public:
  Uploader(ObjectStore& dst, std::string_view key, uint64_t size, const PartPlan& plan,
           PartReader& reader, UploadJournal& journal, const MultipartOptions& o)
      : dst_(dst), key_(key), size_(size), plan_(plan), reader_(reader), journal_(journal), o_(o) {}

  MultipartOutcome Run(const PutOptions& put);

 private:
  std::optional<MultipartOutcome> Start(const PutOptions& put);
  void PlanParts();
  Status OnePart(int i);
  Status ReadAndSend(const PartSpan& span, int i);
  Status SendPart(const PartSpan& span, int i, ByteSource& body, std::string_view md5);
  Status HashInTurn(int i, ByteSource& body);
  Result<PartInfo> SendWithRetries(const PartSpan& span, ByteSource& body, const PartOptions& po);
  Status FillPartChecksums();
  bool Backoff(const Status& s, int attempt);
  Status Fail(Status s, UploadStep step);
  MultipartOutcome AfterParts(const Status& ran);
  MultipartOutcome Complete();
  MultipartOutcome GiveUp(Status s, UploadStep step);
  MultipartOutcome Outcome(Status s, UploadStep step) const;

  ObjectStore& dst_;
  const std::string key_;
  const uint64_t size_;
  const PartPlan plan_;
  PartReader& reader_;
  UploadJournal& journal_;
  const MultipartOptions& o_;
  std::string id_;
  std::optional<ChecksumAlgorithm> part_checksum_;  // each part's, when the upload has one
  std::vector<int> todo_;                           // the numbers of the parts to send
  bool verify_ = false;                             // hash the parts in order against o_.whole_md5
  StreamingDigest whole_{StreamingDigest::Kind::kMd5};  // in part order (hash_turns_)
  Turns budget_turns_, hash_turns_;
  std::atomic<bool> failed_{false};
  std::mutex mu_;
  std::map<int, PartInfo> done_;                // guarded by mu_ while parts run
  Status failure_;                              // guarded by mu_: the first failure
  UploadStep failed_step_ = UploadStep::kRead;  // guarded by mu_
  int sent_ = 0;                                // guarded by mu_
};

MultipartOutcome Uploader::Run(const PutOptions& put) {
  if (put.checksum) part_checksum_ = put.checksum->algorithm;
  if (auto early = Start(put)) return *early;
  PlanParts();
  Status ran = RunParallel(static_cast<int>(todo_.size()), o_.concurrency,
                           [this](int i) { return OnePart(i); });
  return AfterParts(ran);
}

// Continues the upload the journal names, or creates one.
std::optional<MultipartOutcome> Uploader::Start(const PutOptions& put) {
  auto begun = journal_.Begin();
  if (!begun.ok()) return Outcome(begun.status(), UploadStep::kJournal);
  if (*begun) {
    id_ = (*begun)->upload_id;
    for (const PartInfo& p : (*begun)->parts) {
      if (p.number >= 1 && p.number <= plan_.parts) done_[p.number] = p;
    }
    if (part_checksum_ && !done_.empty()) {
      // An earlier run (maybe an older ferry) made it: its parts say
      // whether it has a checksum, and which.
      auto listed = dst_.ListParts(key_, id_);
      if (listed.ok() && !listed->empty()) {
        const auto& first = listed->front().checksum;
        part_checksum_ = first ? std::optional(first->algorithm) : std::nullopt;
      }
    }
    return std::nullopt;
  }
  auto id = dst_.CreateMultipart(key_, put);
  const int refused = id.ok() ? 0 : id.status().http_status();
  if (put.checksum && (refused == 400 || refused == 501)) {
    // A server that takes no checksum headers: the copy goes on without.
    PutOptions plain = put;
    plain.checksum.reset();
    part_checksum_.reset();
    id = dst_.CreateMultipart(key_, plain);
  }
  if (!id.ok()) return Outcome(id.status(), UploadStep::kCreate);
  id_ = *id;
  if (Status s = journal_.Created(id_); !s.ok()) {
    (void)dst_.AbortMultipart(key_, id_);  // unrecorded: nobody would find it
    return Outcome(s, UploadStep::kJournal);
  }
  return std::nullopt;
}

void Uploader::PlanParts() {
  for (int n = 1; n <= plan_.parts; ++n) {
    if (!done_.count(n)) todo_.push_back(n);
  }
  // Parts from an earlier run are not read again: they rest on their
  // Content-MD5 alone, and the whole cannot be hashed.
  verify_ = !o_.whole_md5.empty() && done_.empty();
}

Status Uploader::OnePart(int i) {
  PartSpan span = SpanOf(plan_, size_, todo_[static_cast<size_t>(i)]);
  // Another part failed, or cancelled: the failure is recorded already.
  if (!budget_turns_.Wait(i)) return Fail(CancelledStatus(), UploadStep::kRead);
  BudgetHold hold(o_.budget, span.size);
  budget_turns_.Pass();
  return ReadAndSend(span, i);
}

Status Uploader::ReadAndSend(const PartSpan& span, int i) {
  for (int attempt = 1;; ++attempt) {
    bool handed = false;
    Status s = reader_.Read(span, [&](ByteSource& body, std::string_view md5) {
      handed = true;
      return SendPart(span, i, body, md5);
    });
    if (s.ok()) return s;
    // A failed send was recorded with its own step (the first one wins).
    if (handed || !ShouldRetry(o_.retry, s, attempt) || !Backoff(s, attempt)) {
      return Fail(s, UploadStep::kRead);
    }
  }
}

Status Uploader::SendPart(const PartSpan& span, int i, ByteSource& body, std::string_view md5) {
  if (verify_) FERRY_RETURN_IF_ERROR(HashInTurn(i, body));
  PartOptions po(md5);
  if (part_checksum_) {  // computed here, so the destination verifies the part
    Checksummer sum(*part_checksum_);
    if (Status s = HashAll(body, [&](std::string_view b) { sum.Update(b); }); !s.ok()) {
      return Fail(s, UploadStep::kRead);
    }
    po.checksum = ObjectChecksum{*part_checksum_, sum.FinishBase64(), ChecksumType::kComposite};
  }
  auto part = SendWithRetries(span, body, po);
  if (!part.ok()) return Fail(part.status(), UploadStep::kSend);
  if (Status s = journal_.PartDone(*part); !s.ok()) return Fail(s, UploadStep::kJournal);
  std::lock_guard<std::mutex> lock(mu_);
  done_[span.number] = *part;
  ++sent_;
  return Status::Ok();
}

Status Uploader::HashInTurn(int i, ByteSource& body) {
  if (!hash_turns_.Wait(i)) return Fail(CancelledStatus(), UploadStep::kRead);
  if (Status s = HashAll(body, [this](std::string_view b) { whole_.Update(b); }); !s.ok()) {
    return Fail(s, UploadStep::kRead);
  }
  hash_turns_.Pass();
  return Status::Ok();
}

Result<PartInfo> Uploader::SendWithRetries(const PartSpan& span, ByteSource& body,
                                           const PartOptions& po) {
  for (int attempt = 1;; ++attempt) {
    auto part = dst_.UploadPart(key_, id_, span.number, body, span.size, po);
    if (part.ok()) {
      part->number = span.number;
      part->size = span.size;
      if (!part->checksum) part->checksum = po.checksum;  // the Complete names it
      return part;
    }
    if (!ShouldRetry(o_.retry, part.status(), attempt) || !body.Rewind().ok() ||
        !Backoff(part.status(), attempt)) {
      return part;
    }
  }
}

// Waits before another try; false when it should not be made (cancelled,
// or another part failed meanwhile).
bool Uploader::Backoff(const Status& s, int attempt) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  double r = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  auto until = std::chrono::steady_clock::now() + BackoffDelay(o_.retry, s, attempt, r);
  for (;;) {
    if (CancelRequested() || failed_.load()) return false;
    auto left = until - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return true;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(left, std::chrono::milliseconds(20)));
  }
}

// Records the first failure and stops the parts waiting for their turn.
Status Uploader::Fail(Status s, UploadStep step) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failed_.load()) {
      failure_ = s;
      failed_step_ = step;
      failed_ = true;
    }
  }
  budget_turns_.Abort();  // waiters return after the failure is recorded
  hash_turns_.Abort();
  return s;
}

MultipartOutcome Uploader::AfterParts(const Status& ran) {
  if (!ran.ok()) {
    Status s = ran;
    UploadStep step = UploadStep::kRead;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (failed_.load()) {
        s = failure_;
        step = failed_step_;
      }
    }
    return GiveUp(s, step);
  }
  if (verify_ && HexLower(whole_.Finish()) != o_.whole_md5) {
    // Read wrong from the source: this upload must not complete.
    return GiveUp(Status::Corruption("the parts read from the source do not add up to its MD5 " +
                                     o_.whole_md5),
                  UploadStep::kVerify);
  }
  if (Status s = journal_.MayComplete(); !s.ok()) return GiveUp(s, UploadStep::kPermit);
  return Complete();
}

// Parts an earlier run sent have no checksum in the journal: the
// destination's ListParts has them.
Status Uploader::FillPartChecksums() {
  if (!part_checksum_) return Status::Ok();
  bool missing = false;
  for (const auto& [n, p] : done_) missing |= !p.checksum;
  if (!missing) return Status::Ok();
  FERRY_ASSIGN_OR_RETURN(auto listed, dst_.ListParts(key_, id_));
  for (const PartInfo& l : listed) {
    auto it = done_.find(l.number);
    if (it != done_.end() && !it->second.checksum) it->second.checksum = l.checksum;
  }
  return Status::Ok();
}

MultipartOutcome Uploader::Complete() {
  if (Status s = FillPartChecksums(); !s.ok()) return GiveUp(s, UploadStep::kComplete);
  std::vector<PartInfo> parts;
  std::vector<std::string> part_md5s;
  for (const auto& [n, p] : done_) {
    parts.push_back(p);
    part_md5s.push_back(p.etag);
  }
  auto done = dst_.CompleteMultipart(key_, id_, parts);
  if (!done.ok()) return GiveUp(done.status(), UploadStep::kComplete);
  // What S3 (and ferry's stores) answer for an upload of exactly these parts.
  std::string expect = MultipartEtag(part_md5s);
  if (done->etag.find('-') != std::string::npos && AsciiLower(done->etag) != expect) {
    return Outcome(Status::Corruption("completed object's ETag " + done->etag +
                                      " does not match its parts (" + expect + ")"),
                   UploadStep::kComplete);
  }
  MultipartOutcome out = Outcome(Status::Ok(), UploadStep::kComplete);
  out.object = std::move(*done);
  return out;
}

MultipartOutcome Uploader::GiveUp(Status s, UploadStep step) {
  const bool resumable = journal_.Resumable();
  if (DecideAfterFailure(resumable, step, s) == AfterFailure::kKeep) return Outcome(s, step);
  if (resumable && s.code() == ErrorCode::kNotFound && step != UploadStep::kRead) {
    // Not the object's fault (a lifecycle rule aborted the upload, say).
    s = Status(ErrorCode::kPreconditionFailed, "multipart upload " + id_ + " is gone (" +
                                                   s.ToString() +
                                                   "); the next attempt starts a new one");
  }
  Status aborted = journal_.Abandon(dst_, key_, id_);
  if (!aborted.ok()) {  // say what is left behind, and how to find it
    s = s.WithNote("aborting upload " + id_ + " failed too (" + aborted.ToString() + ")");
  }
  return Outcome(s, step);
}

MultipartOutcome Uploader::Outcome(Status s, UploadStep step) const {
  MultipartOutcome out;
  out.status = std::move(s);
  out.step = step;
  out.parts_sent = sent_;
  return out;
}

}  // namespace

PartSpan SpanOf(const PartPlan& plan, uint64_t size, int number) {
  PartSpan span;
  span.number = number;
  span.offset = static_cast<uint64_t>(number - 1) * plan.part_size;
  span.size = span.offset >= size ? 0 : std::min(plan.part_size, size - span.offset);
  return span;
}

const char* ToString(UploadStep s) {
  switch (s) {
    case UploadStep::kJournal:
      return "journal";
    case UploadStep::kCreate:
      return "create";
    case UploadStep::kRead:
      return "read";
    case UploadStep::kSend:
      return "send";
    case UploadStep::kVerify:
      return "verify";
    case UploadStep::kPermit:
      return "permit";
    case UploadStep::kComplete:
      return "complete";
  }
  return "?";
}

AfterFailure DecideAfterFailure(bool resumable, UploadStep step, const Status& s) {
  if (!resumable || step == UploadStep::kVerify) return AfterFailure::kAbandon;
  if (step == UploadStep::kPermit || s.code() == ErrorCode::kCancelled) return AfterFailure::kKeep;
  if (s.code() == ErrorCode::kNotFound && step != UploadStep::kRead) return AfterFailure::kAbandon;
  return s.retryable() ? AfterFailure::kKeep : AfterFailure::kAbandon;
}

MultipartOutcome UploadMultipart(ObjectStore& dst, std::string_view key, uint64_t size,
                                 const PartPlan& plan, const PutOptions& put, PartReader& reader,
                                 UploadJournal& journal, const MultipartOptions& options) {
  return Uploader(dst, key, size, plan, reader, journal, options).Run(put);
}

}  // namespace ferry
