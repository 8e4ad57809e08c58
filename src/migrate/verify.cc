#include "migrate/verify.h"

#include <chrono>
#include <memory>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "base/cancel.h"
#include "crypto/digest.h"
#include "migrate/content_hash.h"
#include "migrate/key_range.h"
#include "migrate/list_retry.h"
#include "migrate/range_queue.h"
#include "migrate/range_split.h"
#include "migrate/verify_streams.h"

namespace ferry::migrate {
namespace {

using Clock = std::chrono::steady_clock;

// A relative key range being compared: its bounds and how far each side's
// stream has got. Guarded by mu (RangeQueue's contract).
struct VerifyRange {
  VerifyRange(std::string l, std::string u) : lower(std::move(l)), upper(std::move(u)) {}
  std::mutex mu;
  std::string lower, upper;  // (lower, upper], "" upper = no bound
  std::string cursor;        // the greatest key either side has given the merge
  int64_t src_pages = 0;
  bool started = false;
  std::string no_split_at;  // a split search found nothing with the cursor here
  bool no_split_tried = false;

  int SplitScore() const {
    if (!started || src_pages < 1) return 0;
    if (no_split_tried && no_split_at == cursor) return 0;
    return static_cast<int>(src_pages);
  }
};

// Hashes what it is given (--checksum reads).
class Md5Sink : public ByteSink {
 public:
  Status Write(std::string_view data) override {
    md5_.Update(data);
    bytes_ += data.size();
    return Status::Ok();
  }
  std::string Hex() { return HexLower(md5_.Finish()); }
  uint64_t bytes() const { return bytes_; }

 private:
  StreamingDigest md5_{StreamingDigest::Kind::kMd5};
  uint64_t bytes_ = 0;
};

// A difference as a sort record's payload: kind, sizes, source time, the
// source ETag's length, the ETag, the reason.
std::string PackDifference(const Difference& d) {
  std::string p(29, '\0');
  p[0] = static_cast<char>(d.kind);
  uint32_t etag_len = static_cast<uint32_t>(d.src_etag.size());
  std::memcpy(p.data() + 1, &d.src_size, 8);
  std::memcpy(p.data() + 9, &d.dst_size, 8);
  std::memcpy(p.data() + 17, &d.src_modified_ms, 8);
  std::memcpy(p.data() + 25, &etag_len, 4);
  return p + d.src_etag + d.why;
}

Difference UnpackDifference(const SpillRecord& r) {
  Difference d;
  d.key = r.key;
  d.kind = static_cast<Difference::Kind>(r.payload[0]);
  uint32_t etag_len = 0;
  std::memcpy(&d.src_size, r.payload.data() + 1, 8);
  std::memcpy(&d.dst_size, r.payload.data() + 9, 8);
  std::memcpy(&d.src_modified_ms, r.payload.data() + 17, 8);
  std::memcpy(&etag_len, r.payload.data() + 25, 4);
  d.src_etag = r.payload.substr(29, etag_len);
  d.why = r.payload.substr(29 + etag_len);
  return d;
}

class Verifier {
 public:
  explicit Verifier(const VerifyOptions& o)
      : o_(o), differences_(std::make_unique<SpillSorter>(o.spill_dir, o.spill_records)) {
    path_filter_.include = o.filter.include;
    path_filter_.exclude = o.filter.exclude;
  }
  Result<VerifyCounts> Run();

 private:
  bool Stopped() const { return CancelRequested() || (o_.stop != nullptr && o_.stop->load()); }
  ListFn ListerOf(ObjectStore* store) {
    return [this, store](const ListOptions& o) {
      return migrate::ListWithRetry(*store, o, [this] { return Stopped(); });
    };
  }
  Status RunRanges();  // leaves queue_.aborted() set when the listing cannot be trusted
  void Worker();
  Status CompareRange(VerifyRange& r);
  void Split(VerifyRange& victim);
  Status RunSorted();
  // The merge of two ordered streams; `range`, when given, learns how far it got.
  Status Merge(EntryStream& src, EntryStream& dst, VerifyRange* range);
  Status Both(const Listed& a, const Listed& b);
  // The MD5 of a side's object when listing did not give one: its metadata
  // (a HEAD), or its bytes when `read`.
  Result<std::string> FindMd5(ObjectStore* store, const std::string& key, bool read, bool* hashed);
  Status Report(Difference d);
  bool InJobRange(const Listed& e) const {
    return (o_.range_after.empty() && o_.range_upper.empty()) ||
           InRange(o_.src_prefix + e.rel, o_.range_after, o_.range_upper);
  }
  bool AdmitSource(const Listed& e) const {
    return InJobRange(e) && Admit(o_.filter, o_.filter_prefix + e.rel, e.size, e.modified_ms);
  }
  bool AdmitDestination(const Listed& e) const {
    return InJobRange(e) && Admit(path_filter_, o_.filter_prefix + e.rel, e.size, e.modified_ms);
  }

  // Keys each side's delimiter listings showed (range_split.h KnownKeys).
  Status LearnKnownKeys();
  // After whole listings: an error when a side never listed a known key.
  Status CheckNothingSkipped(ObjectStore* store, const KnownKeys& known, const char* side);

  const VerifyOptions& o_;
  FilterSpec path_filter_;  // the globs alone, for keys only the destination has
  KnownKeys src_known_, dst_known_;
  RangeQueue<VerifyRange> queue_;
  std::mutex mu_;
  std::unique_ptr<SpillSorter> differences_;  // guarded by mu_
  VerifyCounts counts_;      // guarded by mu_
};

Status Verifier::Report(Difference d) {
  std::lock_guard<std::mutex> lock(mu_);
  switch (d.kind) {
    case Difference::Kind::kMissing: ++counts_.missing; break;
    case Difference::Kind::kDiffers: ++counts_.differing; break;
    case Difference::Kind::kExtra: ++counts_.extra; break;
  }
  std::string key = d.key;
  return differences_->Add({std::move(key), PackDifference(d)});
}

Result<std::string> Verifier::FindMd5(ObjectStore* store, const std::string& key, bool read,
                                      bool* hashed) {
  if (!read) {
    FERRY_ASSIGN_OR_RETURN(ObjectInfo info, store->Head(key));
    std::lock_guard<std::mutex> lock(mu_);
    ++counts_.lookups;
    return KnownMd5(info);
  }
  Md5Sink sink;
  FERRY_RETURN_IF_ERROR(store->Get(key, GetOptions{}, sink).status());
  *hashed = true;
  std::lock_guard<std::mutex> lock(mu_);
  counts_.bytes_hashed += static_cast<int64_t>(sink.bytes());
  return sink.Hex();
}

Status Verifier::Both(const Listed& a, const Listed& b) {
  if (o_.keys_only) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counts_.matched;
    return Status::Ok();
  }
  VerifySide s{a.size, ListedMd5(a.etag), a.modified_ms};
  VerifySide d{b.size, ListedMd5(b.etag), b.modified_ms};
  bool hashed = false;
  // Equal sizes and an MD5 missing on a side: its metadata may hold one
  // (multipart uploads by ferry or rclone; a local file's own bytes), else,
  // with --checksum, its bytes do.
  for (bool read : {false, true}) {
    if (s.size != d.size || (!s.md5.empty() && !d.md5.empty())) break;
    if (read && !o_.checksum) break;
    if (s.md5.empty()) {
      auto m = FindMd5(o_.src, o_.src_prefix + a.rel, read, &hashed);
      if (!m.ok()) return m.status().WithContext("source " + a.rel);
      s.md5 = *m;
    }
    if (d.md5.empty()) {
      auto m = FindMd5(o_.dst, o_.dst_prefix + b.rel, read, &hashed);
      if (!m.ok()) return m.status().WithContext("destination " + b.rel);
      d.md5 = *m;
    }
  }
  PairVerdict v = JudgePair(s, d, hashed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (v.same) ++counts_.matched;
    if (v.by == VerifyBy::kMd5) ++counts_.by_md5;
    if (v.by == VerifyBy::kChecksum) ++counts_.by_checksum;
    if (v.by == VerifyBy::kSizeAndTime) ++counts_.by_size_time;
  }
  if (v.same) return Status::Ok();
  return Report({Difference::Kind::kDiffers, a.rel, a.size, b.size, v.why, a.etag, a.modified_ms});
}

Status Verifier::Merge(EntryStream& src, EntryStream& dst, VerifyRange* range) {
  for (;;) {
    if (Stopped()) return Status::Cancelled("verify stopped");
    if (range != nullptr && queue_.stopped()) return Status::Ok();  // another range failed
    FERRY_ASSIGN_OR_RETURN(const Listed* a, src.Peek());
    FERRY_ASSIGN_OR_RETURN(const Listed* b, dst.Peek());
    for (EntryStream* side : {&src, &dst}) {
      if (!side->disorder().empty()) {
        queue_.Abort((side == &src ? "source: " : "destination: ") + side->disorder());
        return Status::Ok();
      }
    }
    if (a == nullptr && b == nullptr) return Status::Ok();
    const std::string& key = a != nullptr && (b == nullptr || a->rel <= b->rel) ? a->rel : b->rel;
    if (range != nullptr) {
      // Taken under the range's lock, with its bound looked at again: a
      // split that happened since the streams peeked cut the range below
      // this key, which is then the new range's (Split() only cuts above
      // the cursor).
      std::lock_guard<std::mutex> lock(range->mu);
      if (!range->upper.empty() && key > range->upper) return Status::Ok();
      range->cursor = key;
      range->src_pages = src.pages();
    }
    if (b == nullptr || (a != nullptr && a->rel < b->rel)) {
      if (AdmitSource(*a)) {
        FERRY_RETURN_IF_ERROR(
            Report({Difference::Kind::kMissing, a->rel, a->size, 0, "", a->etag, a->modified_ms}));
      }
      src.Pop();
    } else if (a == nullptr || b->rel < a->rel) {
      if (AdmitDestination(*b)) {
        FERRY_RETURN_IF_ERROR(Report({Difference::Kind::kExtra, b->rel, 0, b->size, "", "", 0}));
      }
      dst.Pop();
    } else {
      // A key the job's filters leave out is not expected: neither side counts.
      if (AdmitSource(*a)) FERRY_RETURN_IF_ERROR(Both(*a, *b));
      src.Pop();
      dst.Pop();
    }
    if (range != nullptr) queue_.Progress();
  }
}

Status Verifier::CompareRange(VerifyRange& r) {
  std::string lower;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    lower = r.lower;
    r.started = true;
  }
  auto upper = [&r] {
    std::lock_guard<std::mutex> lock(r.mu);
    return r.upper;
  };
  RangeSide src(ListerOf(o_.src), o_.src_prefix, lower, o_.list_chunk, upper, &src_known_);
  RangeSide dst(ListerOf(o_.dst), o_.dst_prefix, lower, o_.list_chunk, upper, &dst_known_);
  return Merge(src, dst, &r);
}

// Splits the source side of a range an other thread compares, above where
// its merge has got: it keeps (.., s], the new range takes (s, upper].
void Verifier::Split(VerifyRange& victim) {
  std::string from, upper;
  {
    std::lock_guard<std::mutex> lock(victim.mu);
    from = std::max(victim.lower, victim.cursor);
    upper = victim.upper;
  }
  auto abs = [this](const std::string& rel) { return rel.empty() ? rel : o_.src_prefix + rel; };
  auto search = FindSplit(ListerOf(o_.src), o_.src_prefix, abs(from), abs(upper));
  if (!search.ok() || Stopped()) return;
  if (!search->disorder.empty()) {
    queue_.Abort("source: " + search->disorder);
    return;
  }
  std::lock_guard<std::mutex> lock(victim.mu);
  if (!search->at) {
    victim.no_split_tried = true;
    victim.no_split_at = victim.cursor;
    return;
  }
  std::string at = search->at->substr(o_.src_prefix.size());
  if (victim.upper != upper || at <= std::max(victim.lower, victim.cursor)) return;
  victim.upper = at;
  queue_.Push(std::make_shared<VerifyRange>(at, upper));
}

void Verifier::Worker() {
  for (;;) {
    auto next = queue_.Take(/*may_split=*/true);
    if (next.kind == RangeQueue<VerifyRange>::Next::Kind::kDone) return;
    if (next.kind == RangeQueue<VerifyRange>::Next::Kind::kSplit) {
      Split(*next.item);
      queue_.SplitDone(next.item);
      continue;
    }
    Status s = CompareRange(*next.item);
    if (!s.ok()) queue_.Fail(s);
    queue_.Done(next.item);
  }
}

Status Verifier::LearnKnownKeys() {
  const size_t max = static_cast<size_t>(std::max(1, o_.concurrency) * 4);
  if (dst_known_.empty()) {
    FERRY_ASSIGN_OR_RETURN(SplitPoints d, PrefixSplitPoints(ListerOf(o_.dst), o_.dst_prefix, "", "", max));
    dst_known_.Add(d.keys);
  }
  if (src_known_.empty()) {
    FERRY_ASSIGN_OR_RETURN(SplitPoints s, PrefixSplitPoints(ListerOf(o_.src), o_.src_prefix, "", "", max));
    src_known_.Add(s.keys);
  }
  return Status::Ok();
}

Status Verifier::CheckNothingSkipped(ObjectStore* store, const KnownKeys& known, const char* side) {
  for (const std::string& k : known.Unseen()) {
    auto head = store->Head(k);
    if (!head.ok() && head.status().code() == ErrorCode::kNotFound) continue;  // deleted since
    return Status::Protocol(std::string("the ") + side + " " + store->Describe() +
                            " never listed \"" + k + "\", which exists (its delimiter listing "
                            "shows it): it cannot be listed completely, so it cannot be verified")
        .set_retryable(false);
  }
  return Status::Ok();
}

Status Verifier::RunRanges() {
  std::vector<std::string> bounds;
  auto points = PrefixSplitPoints(ListerOf(o_.src), o_.src_prefix, "", "",
                                  static_cast<size_t>(std::max(1, o_.concurrency) * 4));
  if (points.ok()) {
    for (const auto& p : points->bounds) bounds.push_back(p.substr(o_.src_prefix.size()));
    src_known_.Add(points->keys);
  }
  FERRY_RETURN_IF_ERROR(LearnKnownKeys());
  std::string lower;
  for (const auto& b : bounds) {
    queue_.Push(std::make_shared<VerifyRange>(lower, b));
    lower = b;
  }
  queue_.Push(std::make_shared<VerifyRange>(lower, ""));
  std::vector<std::thread> threads;
  for (int i = 1; i < std::max(1, o_.concurrency); ++i) threads.emplace_back([this] { Worker(); });
  Worker();
  for (auto& t : threads) t.join();
  return queue_.error();
}

Status Verifier::RunSorted() {
  FERRY_RETURN_IF_ERROR(LearnKnownKeys());
  SpillSorter src_sorted(o_.spill_dir, o_.spill_records), dst_sorted(o_.spill_dir, o_.spill_records);
  Status dst_status;
  std::thread dst_thread([&] {
    dst_status = ListWhole(ListerOf(o_.dst), o_.dst_prefix, o_.list_chunk, &dst_sorted, &dst_known_,
                           o_.stop);
  });
  Status src_status = ListWhole(ListerOf(o_.src), o_.src_prefix, o_.list_chunk, &src_sorted,
                                &src_known_, o_.stop);
  dst_thread.join();
  FERRY_RETURN_IF_ERROR(src_status.WithContext("listing the source"));
  FERRY_RETURN_IF_ERROR(dst_status.WithContext("listing the destination"));
  FERRY_RETURN_IF_ERROR(CheckNothingSkipped(o_.src, src_known_, "source"));
  FERRY_RETURN_IF_ERROR(CheckNothingSkipped(o_.dst, dst_known_, "destination"));
  SortedSide src(src_sorted), dst(dst_sorted);
  return Merge(src, dst, nullptr);
}

Result<VerifyCounts> Verifier::Run() {
  const auto start = Clock::now();
  const bool ranges = !o_.force_spill && o_.src->Features().range_listing &&
                      o_.dst->Features().range_listing;
  if (ranges) FERRY_RETURN_IF_ERROR(RunRanges());
  if (!ranges || !queue_.aborted().empty()) {
    if (ranges) {
      if (o_.on_warning) {
        o_.on_warning(queue_.aborted() + "; comparing again from whole listings sorted on disk");
      }
      // What the ranges found cannot be trusted: start over.
      std::lock_guard<std::mutex> lock(mu_);
      differences_ = std::make_unique<SpillSorter>(o_.spill_dir, o_.spill_records);
      counts_ = VerifyCounts();
    }
    counts_.sorted_on_disk = true;
    FERRY_RETURN_IF_ERROR(RunSorted());
  }
  if (Stopped()) return Status::Cancelled("verify stopped");
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(std::optional<SpillRecord> r, differences_->Next());
    if (!r) break;
    if (o_.on_difference) o_.on_difference(UnpackDifference(*r));
  }
  counts_.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return counts_;
}

}  // namespace

Result<VerifyCounts> RunVerify(const VerifyOptions& o) {
  if (o.src == nullptr || o.dst == nullptr) return Status::InvalidArgument("verify needs two stores");
  return Verifier(o).Run();
}

}  // namespace ferry::migrate
