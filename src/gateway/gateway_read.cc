// The gateway's reads: where a key's answer comes from (the destination, an
// on-demand copy, or the source passed through), the claim in the job's
// state that makes each key copied once, and the copy's write to the
// destination after the client has its answer.

#include <spdlog/spdlog.h>

#include <thread>

#include "base/crash_point.h"
#include "base/unix_time.h"
#include "gateway/gateway_internal.h"
#include "ops/copy.h"

namespace ferry::gateway {
namespace {

// A sink that keeps a body in memory up to `cap` bytes and fails past it.
class CappedSink : public ByteSink {
 public:
  explicit CappedSink(uint64_t cap) : cap_(cap) {}
  Status Write(std::string_view data) override {
    if (inner_.data().size() + data.size() > cap_) return Over();
    return inner_.Write(data);
  }
  char* Lend(size_t n) override {
    if (inner_.data().size() + n > cap_) return nullptr;
    return inner_.Lend(n);
  }
  Status Commit(size_t n) override { return inner_.Commit(n); }
  // A body announced over the cap is refused before its first byte.
  Status Start(const ObjectInfo& info) override { return info.size > cap_ ? Over() : Status::Ok(); }
  bool over() const { return over_; }
  std::string Take() { return std::move(inner_.data()); }

 private:
  Status Over() {
    over_ = true;
    return Status(ErrorCode::kCancelled, "larger than the gateway's inline limit");
  }
  uint64_t cap_;
  StringSink inner_;
  bool over_ = false;
};

// An on-demand copy up to this size is answered once whole; larger ones as
// their bytes arrive.
constexpr uint64_t kWholeBelow = 256 << 10;

Status NoSuchKey(const std::string& key) {
  return s3::S3ErrorStatus(404, "NoSuchKey", "The specified key does not exist: " + key);
}

// A failing source as the client sees it: 503, retry later.
Status SourceUnavailable(const std::string& key, const Status& st) {
  return s3::S3ErrorStatus(
      503, "ServiceUnavailable",
      "the migration's source is unavailable for " + key + " (not copied yet): " + st.message());
}

}  // namespace

Result<Held> Gateway::Impl::Fetch(ObjectStore& store, const std::string& store_key,
                                  bool want_body) {
  if (!want_body) {
    FERRY_ASSIGN_OR_RETURN(ObjectInfo info, store.Head(store_key));
    return Held{std::move(info), nullptr};
  }
  CappedSink sink(options.inline_limit);
  auto info = store.Get(store_key, GetOptions{}, sink);
  if (!info.ok()) {
    if (sink.over()) return Status(ErrorCode::kCancelled, "large");
    return info.status();
  }
  return Held{std::move(*info), std::make_shared<const std::string>(sink.Take())};
}

Result<Gateway::Impl::Found> Gateway::Impl::FromDestination(const std::string& key,
                                                            bool want_body) {
  Found f;
  f.from = From::kDestination;
  f.at_destination = true;
  auto held = Fetch(*stores.dst, DstKey(key), want_body);
  if (held.ok()) {
    f.held = std::move(*held);
    return f;
  }
  if (held.status().code() == ErrorCode::kCancelled) return f;  // large: streamed
  return held.status();
}

Result<Gateway::Impl::Found> Gateway::Impl::Passthrough(const std::string& key, bool want_body) {
  auto held = Fetch(*stores.src, SrcKey(key), want_body);
  if (!held.ok()) {
    if (held.status().code() == ErrorCode::kNotFound) return NoSuchKey(key);
    if (held.status().code() == ErrorCode::kCancelled) {
      Found large;  // streamed from the source in ranges
      large.from = From::kPassthrough;
      return large;
    }
    metrics.source_errors++;
    return SourceUnavailable(key, held.status());
  }
  Found f;
  f.from = From::kPassthrough;
  f.held = std::move(*held);
  return f;
}

void Gateway::Impl::EndCopy(const std::string& key, const std::shared_ptr<Copy>& copy) {
  {
    std::lock_guard lock(copy->mu);
    copy->persisted = true;
  }
  copy->cv.notify_all();
  std::lock_guard lock(copies_mu);
  auto it = copies.find(key);
  if (it != copies.end() && it->second == copy) copies.erase(it);
  drained.notify_all();
}

Result<bool> Gateway::Impl::MarkCopied(const std::string& key, uint64_t size,
                                       const std::string& etag) {
  auto marked = stores.state->MarkKey(options.job, SrcKey(key), options.owner,
                                      state::KeyMark::kCopied, size, etag, NowUnixMs());
  if (marked.ok() && *marked) {
    metrics.on_demand_copies++;
    metrics.on_demand_bytes += size;
  }
  return marked;
}

void Gateway::Impl::Persist(const std::string& key, const std::shared_ptr<Copy>& copy) {
  auto whole = copy->body->WaitEnd();  // ok: RunCopy calls this only then
  const std::string& body = *copy->body->Body();
  PutOptions po;
  po.headers = whole->headers;
  po.checksum = whole->checksum;  // the source's, compared by the destination
  ViewSource source(body);
  auto put = stores.dst->Put(DstKey(key), source, body.size(), po);
  if (put.ok()) {
    CrashPoint("gateway-copied");  // written, not yet marked: the worst place to die
    auto marked = MarkCopied(key, body.size(), whole->etag);
    if (!marked.ok() || !*marked) {
      // The lease ended first and another party took the key: it copies it
      // again; nothing is counted twice.
      metrics.persist_failures++;
      spdlog::warn("gateway: {} copied but not marked ({})", key,
                   marked.ok() ? "its claim was taken over" : marked.status().ToString());
    }
  } else {
    metrics.persist_failures++;
    spdlog::warn("gateway: on-demand copy of {} not written to the destination: {}", key,
                 put.status().ToString());
    (void)stores.state->ReleaseKey(options.job, SrcKey(key), options.owner);
  }
  EndCopy(key, copy);
}

// Too large to hold: copied store to store (multipart), then served from
// the destination; its readers wait for that.
void Gateway::Impl::CopyLarge(const std::string& key, const std::shared_ptr<Copy>& copy) {
  if (options.scope.by_object) {
    auto head = stores.src->Head(SrcKey(key));
    if (head.ok() && !options.scope.by_object(key, head->size, UnixMs(head->last_modified))) {
      // The job's size or age filters leave it out: passed through, not copied.
      copy->kept = false;
      (void)stores.state->ReleaseKey(options.job, SrcKey(key), options.owner);
      return EndCopy(key, copy);
    }
  }
  auto copied =
      ferry::CopyObject(*stores.src, SrcKey(key), *stores.dst, DstKey(key), false, CopyOptions{});
  Status outcome = copied.status();
  if (copied.ok()) {
    (void)MarkCopied(key, copied->bytes, copied->etag);
  } else {
    (void)stores.state->ReleaseKey(options.job, SrcKey(key), options.owner);
  }
  {
    std::lock_guard lock(copy->mu);
    copy->large = outcome;
  }
  EndCopy(key, copy);
}

// On a copier thread (or the request's worker when they are all busy): the
// source read once into the copy's body, which its readers take as it
// arrives; then written and marked.
void Gateway::Impl::RunCopy(const std::string& key, const std::shared_ptr<Copy>& copy) {
  auto got = stores.src->Get(SrcKey(key), GetOptions{}, *copy->body);
  if (!got.ok() && copy->body->large()) {
    if (auto info = copy->body->announced()) return CopyWindowed(key, copy, *info);
  }
  copy->body->End(got);
  if (got.ok() && options.scope.by_object &&
      !options.scope.by_object(key, got->size, UnixMs(got->last_modified))) {
    // The job's size or age filters leave it out: answered, not copied.
    (void)stores.state->ReleaseKey(options.job, SrcKey(key), options.owner);
    return EndCopy(key, copy);
  }
  if (got.ok()) return Persist(key, copy);
  if (copy->body->large()) return CopyLarge(key, copy);
  if (got.status().code() != ErrorCode::kNotFound) metrics.source_errors++;
  (void)stores.state->ReleaseKey(options.job, SrcKey(key), options.owner);
  EndCopy(key, copy);
}

namespace {

// The bytes of one part on their way: to the window's readers and into the
// part's own buffer for its upload.
class PartTee : public ByteSink {
 public:
  explicit PartTee(Arrival& body) : body_(body) {}
  Status Write(std::string_view data) override {
    FERRY_RETURN_IF_ERROR(body_.Write(data));
    part_.append(data);
    return Status::Ok();
  }
  std::string& part() { return part_; }

 private:
  Arrival& body_;
  std::string part_;
};

}  // namespace

Result<ObjectInfo> Gateway::Impl::FetchInParts(const std::string& key, Arrival& body,
                                               const ObjectInfo& info, bool upload) {
  // Parts of 16 MiB, more for objects past 160 GB (S3 takes 10,000 parts).
  const uint64_t part = std::max<uint64_t>(16ull << 20, (info.size + 9'999) / 10'000);
  std::string id;
  if (upload) {
    PutOptions po;
    po.headers = info.headers;
    FERRY_ASSIGN_OR_RETURN(id, stores.dst->CreateMultipart(DstKey(key), po));
  }
  auto give_up = [&](const Status& st) {
    if (upload) (void)stores.dst->AbortMultipart(DstKey(key), id);
    return st;
  };
  std::vector<PartInfo> parts;
  for (uint64_t offset = 0; offset < info.size; offset += part) {
    const uint64_t length = std::min(part, info.size - offset);
    body.WaitRoom(length);  // the slowest reader sets the pace
    PartTee tee(body);
    GetOptions go;
    go.range = ByteRange{offset, length};
    go.if_match = info.etag;  // one version, part after part
    auto got = stores.src->Get(SrcKey(key), go, tee);
    if (!got.ok()) return give_up(got.status());
    if (tee.part().size() != length) {
      return give_up(Status::Corruption("short part of " + key + " from the source"));
    }
    if (!upload) continue;
    StringSource bytes(std::move(tee.part()));
    auto sent = stores.dst->UploadPart(DstKey(key), id, static_cast<int>(parts.size() + 1), bytes,
                                       length, "");
    if (!sent.ok()) return give_up(sent.status());
    parts.push_back(*sent);
  }
  if (!upload) return info;
  auto landed = stores.dst->CompleteMultipart(DstKey(key), id, parts);
  if (!landed.ok()) return give_up(landed.status());
  return landed;
}

void Gateway::Impl::CopyWindowed(const std::string& key, const std::shared_ptr<Copy>& copy,
                                 const ObjectInfo& info) {
  copy->body->BeginWindow(info, options.inline_limit);
  const bool keep = !options.scope.by_object ||
                    options.scope.by_object(key, info.size, UnixMs(info.last_modified));
  copy->kept = keep;
  auto landed = FetchInParts(key, *copy->body, info, keep);
  if (landed.ok() && keep) {
    CrashPoint("gateway-copied");
    auto marked = MarkCopied(key, info.size, info.etag);
    if (!marked.ok() || !*marked) metrics.persist_failures++;
  } else {
    if (!landed.ok()) {
      copy->kept = false;
      if (landed.status().code() != ErrorCode::kNotFound) metrics.source_errors++;
    }
    (void)stores.state->ReleaseKey(options.job, SrcKey(key), options.owner);
  }
  copy->body->End(landed);
  EndCopy(key, copy);
}

Arrival::Landed Gateway::Impl::LandedOf(const std::string& key, const std::shared_ptr<Copy>& copy) {
  return [this, key, copy](uint64_t first, uint64_t last) -> std::shared_ptr<http::BodyReader> {
    auto end = copy->body->WaitEnd();  // ok: LateReader asks only then
    if (copy->kept) return RangesOf(*stores.dst, DstKey(key), end->etag)(first, last);
    return RangesOf(*stores.src, SrcKey(key), end->etag)(first, last);
  };
}

std::shared_ptr<Copy> Gateway::Impl::CopyOf(const std::string& key) {
  std::lock_guard lock(copies_mu);
  auto it = copies.find(key);
  return it == copies.end() ? nullptr : it->second;
}

Result<Gateway::Impl::Found> Gateway::Impl::FromCopy(const std::string& key,
                                                     const std::shared_ptr<Copy>& copy,
                                                     bool want_body) {
  auto info = copy->body->WaitInfo();
  if (info.ok()) {
    Found f;
    f.from = From::kOnDemand;
    f.arriving = copy->body;
    f.copy = copy;
    return f;
  }
  if (!copy->body->large()) {
    if (info.status().code() == ErrorCode::kNotFound) return NoSuchKey(key);
    return SourceUnavailable(key, info.status());
  }
  Status large;
  {
    std::unique_lock lock(copy->mu);
    copy->cv.wait(lock, [&] { return copy->persisted; });
    large = copy->large;
  }
  if (!large.ok()) {
    if (large.code() == ErrorCode::kNotFound) return NoSuchKey(key);
    return SourceUnavailable(key, large);
  }
  if (!copy->kept) return Passthrough(key, want_body);
  auto f = FromDestination(key, want_body);
  if (f.ok()) f->from = From::kOnDemand;
  return f;
}

Result<Gateway::Impl::Found> Gateway::Impl::OnDemand(const std::string& key,
                                                     std::unique_lock<std::mutex>& key_lock) {
  auto copy = std::make_shared<Copy>(options.inline_limit);
  {
    // Under the key's lock no other thread of ours has registered one.
    std::lock_guard lock(copies_mu);
    copies[key] = copy;
  }
  key_lock.unlock();
  if (!copiers->TrySubmit([this, key, copy] { RunCopy(key, copy); })) RunCopy(key, copy);
  return FromCopy(key, copy, true);
}

Result<Gateway::Impl::Found> Gateway::Impl::AfterTheJob(const std::string& key, bool want_body,
                                                        state::JobState ended) {
  auto dst = FromDestination(key, want_body);
  if (dst.ok() || dst.status().code() != ErrorCode::kNotFound) return dst;
  // Completed: the destination has every key. Failed or cancelled: what it
  // left behind is still at the source, but for keys a client deleted
  // through the gateway (their marks outlive the job).
  if (ended == state::JobState::kCompleted) return dst;
  return DestinationElseSource(key, want_body);
}

Result<Gateway::Impl::Found> Gateway::Impl::DestinationElseSource(const std::string& key,
                                                                  bool want_body) {
  auto dst = FromDestination(key, want_body);
  if (dst.ok() || dst.status().code() != ErrorCode::kNotFound) return dst;
  auto marks = stores.state->KeyMarks(options.job, {SrcKey(key)});
  if (!marks.ok()) return marks.status();
  if (marks->count(SrcKey(key)) > 0 && marks->at(SrcKey(key)) == state::KeyMark::kDeleted) {
    return NoSuchKey(key);
  }
  return Passthrough(key, want_body);
}

std::optional<Result<Gateway::Impl::Found>> Gateway::Impl::FromOurCopy(const std::string& key,
                                                                       bool want_body) {
  std::shared_ptr<Copy> mine = CopyOf(key);
  if (!mine) return std::nullopt;
  metrics.shared_fetches++;
  return FromCopy(key, mine, want_body);
}

std::optional<Result<Gateway::Impl::Found>> Gateway::Impl::Answer(
    const std::string& key, bool want_body, const state::KeyClaim& claim,
    std::unique_lock<std::mutex>& key_lock) {
  using Kind = state::KeyClaim::Kind;
  if (claim.kind != Kind::kClaimed) key_lock.unlock();
  switch (claim.kind) {
    case Kind::kClaimed:
      if (!want_body) {  // a HEAD copies nothing: the claim goes back
        (void)stores.state->ReleaseKey(options.job, SrcKey(key), options.owner);
        key_lock.unlock();
        return Passthrough(key, false);
      }
      if (options.look_before_copy || (!claim.from_row && !claim.unlisted)) {
        // Not listed when claimed, as far as can be told: a worker may have
        // listed, copied and finished it since the destination said 404
        // (its row is gone only after its copy landed). Look once more
        // before copying. (Unlisted when the mark was made: no one else
        // can have copied it.) A job that keeps what the destination has
        // (look_before_copy) looks even for a listed key.
        auto landed = FromDestination(key, true);
        if (landed.ok() || landed.status().code() != ErrorCode::kNotFound) {
          (void)stores.state->ReleaseKey(options.job, SrcKey(key), options.owner);
          key_lock.unlock();
          return landed;
        }
      }
      return OnDemand(key, key_lock);
    case Kind::kRecorded:
      if (claim.mark == state::KeyMark::kDeleted) return Result<Found>(NoSuchKey(key));
      return FromDestination(key, want_body);
    case Kind::kNone: {
      // Listed and finished (or never in the job): the destination, else
      // the source as it is (a dead-lettered key, one added since).
      auto dst = FromDestination(key, want_body);
      if (dst.ok() || dst.status().code() != ErrorCode::kNotFound) return dst;
      return Passthrough(key, want_body);
    }
    case Kind::kBusy:
      break;
  }
  return std::nullopt;
}

Result<Gateway::Impl::Found> Gateway::Impl::Find(const std::string& key, bool want_body) {
  if (auto ended = Ended()) return AfterTheJob(key, want_body, *ended);
  // Never the job's: no copy on demand.
  if (!InScope(key)) return DestinationElseSource(key, want_body);
  const auto deadline = std::chrono::steady_clock::now() + options.busy_wait;
  auto pause = std::chrono::milliseconds(5);
  bool waited = false;
  for (;;) {
    if (auto ours = FromOurCopy(key, want_body)) return std::move(*ours);
    std::unique_lock key_lock(KeyLock(key));
    if (HasCopy(key)) continue;  // registered meanwhile: wait for it
    auto claim = ClaimFor(key, false);
    if (!claim.ok()) return claim.status();
    if (!*claim) {
      key_lock.unlock();
      return AfterTheJob(key, want_body, Ended(true).value_or(state::JobState::kCompleted));
    }
    if ((*claim)->kind == state::KeyClaim::Kind::kNone && !(*claim)->listing_done) {
      // Copied before (then the destination has it) or not listed yet; a
      // key its range shard has not reached needs no look.
      if (!(*claim)->unlisted || options.look_before_copy) {
        key_lock.unlock();
        auto dst = FromDestination(key, want_body);
        if (dst.ok() || dst.status().code() != ErrorCode::kNotFound) return dst;
        key_lock.lock();
        if (HasCopy(key)) continue;
      }
      if (!want_body) {  // a HEAD copies nothing
        key_lock.unlock();
        return Passthrough(key, false);
      }
      claim = ClaimFor(key, true);
      if (!claim.ok()) return claim.status();
      if (!*claim) {
        key_lock.unlock();
        return AfterTheJob(key, want_body, Ended(true).value_or(state::JobState::kCompleted));
      }
    }
    if (auto answer = Answer(key, want_body, **claim, key_lock)) return std::move(*answer);
    // A worker (or another gateway) is copying it: wait, then look again.
    if (!waited) metrics.busy_waits++;
    waited = true;
    if (std::chrono::steady_clock::now() + pause > deadline) return Passthrough(key, want_body);
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
}

Result<std::optional<state::KeyClaim>> Gateway::Impl::ClaimFor(const std::string& key,
                                                               bool insert) {
  const int64_t now = NowUnixMs();
  auto claim = stores.state->ClaimKey(options.job, SrcKey(key), options.owner, now,
                                      now + options.lease.count(), insert);
  if (claim.ok()) return std::optional<state::KeyClaim>(std::move(*claim));
  // The job ended and was archived since it was last read: no claim.
  if (claim.status().code() == ErrorCode::kNotFound && Ended(true)) {
    return std::optional<state::KeyClaim>();
  }
  return claim.status();
}

http::ServerResponse Gateway::Impl::GetOrHead(const Request& r) {
  const bool head = r.http->method == "HEAD";
  auto found = Find(r.key, !head);
  if (!found.ok()) return Error(r, found.status());
  if (found->held) {
    const uint64_t bytes = head || !found->held->body ? 0 : found->held->body->size();
    return Count(ObjectAnswer(r, *found->held, head), found->from, bytes);
  }
  if (found->arriving) {  // answered as its bytes arrive from the source
    auto info = found->arriving->WaitInfo();
    if (!info.ok()) return Error(r, SourceUnavailable(r.key, info.status()));
    if (info->size <= kWholeBelow && !found->arriving->windowed()) {
      // Small: in a moment it is whole, and answered as one body (a stream
      // costs its reads and writes more than the wait).
      auto whole = found->arriving->WaitEnd();
      if (!whole.ok()) return Error(r, SourceUnavailable(r.key, whole.status()));
      Held held{*whole, found->arriving->Body()};
      return Count(ObjectAnswer(r, held, head), found->from, head ? 0 : held.body->size());
    }
    std::shared_ptr<Arrival> body = found->arriving;
    Arrival::Landed landed = LandedOf(r.key, found->copy);
    auto resp = StreamAnswer(r, *info, head, [body, landed](uint64_t first, uint64_t last) {
      return body->Reader(first, last - first + 1, landed);
    });
    return Count(std::move(resp), found->from, head ? 0 : info->size);
  }
  // Large, at the destination (or the source, passed through): its size
  // and version, then ranges as sent.
  ObjectStore& store = found->at_destination ? *stores.dst : *stores.src;
  const std::string store_key = found->at_destination ? DstKey(r.key) : SrcKey(r.key);
  auto info = store.Head(store_key);
  if (!info.ok()) return Error(r, info.status());
  return Count(StreamAnswer(r, *info, head, RangesOf(store, store_key, info->etag)), found->from,
               head ? 0 : info->size);
}

}  // namespace ferry::gateway
