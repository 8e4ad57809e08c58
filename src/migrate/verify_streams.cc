#include "migrate/verify_streams.h"

#include <cstring>

#include "base/unix_time.h"
#include "migrate/key_range.h"

namespace ferry::migrate {
namespace {

// A listing entry as a sort record's payload: size, time, then the ETag.
std::string Pack(const ObjectInfo& o) {
  std::string p(16, '\0');
  uint64_t size = o.size;
  int64_t ms = UnixMs(o.last_modified);
  std::memcpy(p.data(), &size, 8);
  std::memcpy(p.data() + 8, &ms, 8);
  return p + o.etag;
}

bool Unpack(const SpillRecord& r, Listed* out) {
  if (r.payload.size() < 16) return false;
  out->rel = r.key;
  std::memcpy(&out->size, r.payload.data(), 8);
  std::memcpy(&out->modified_ms, r.payload.data() + 8, 8);
  out->etag = r.payload.substr(16);
  return true;
}

}  // namespace

RangeSide::RangeSide(ListFn list, std::string prefix, const std::string& lower, int chunk,
                     std::function<std::string()> upper, const KnownKeys* known)
    : list_(std::move(list)),
      prefix_(std::move(prefix)),
      chunk_(chunk),
      upper_(std::move(upper)),
      known_(known),
      after_(lower.empty() ? "" : prefix_ + lower) {}

Status RangeSide::Fill(const std::string& upper) {
  ListOptions o;
  o.prefix = prefix_;
  o.start_after = after_;
  o.max_keys = chunk_;
  FERRY_ASSIGN_OR_RETURN(ListPage page, list_(o));
  ++pages_;
  const std::string abs_upper = upper.empty() ? "" : prefix_ + upper;
  RangePageCheck check = CheckRangePage(page.objects, prefix_, after_, abs_upper);
  if (check.in_order && page.truncated && page.objects.empty()) {
    check.in_order = false;
    check.why = "a page after \"" + after_ + "\" is truncated but holds no key";
  }
  if (check.in_order && known_ != nullptr) {
    const bool ends = check.past_upper || !page.truncated;
    std::string skipped = known_->FirstSkipped(after_, ends ? abs_upper : page.objects.back().key,
                                               page.objects, check.keep);
    if (!skipped.empty()) {
      check.in_order = false;
      check.why = "key \"" + skipped + "\", which its delimiter listing shows, is missing from "
                  "its flat listing after \"" + after_ + "\" (not in byte order)";
    }
  }
  if (!check.in_order) {
    disorder_ = check.why;
    more_ = false;
    buf_.clear();
    return Status::Ok();
  }
  for (size_t i = 0; i < check.keep; ++i) {
    const ObjectInfo& obj = page.objects[i];
    buf_.push_back({obj.key.substr(prefix_.size()), obj.size, obj.etag, UnixMs(obj.last_modified)});
  }
  if (!page.objects.empty()) after_ = page.objects.back().key;
  more_ = page.truncated && !check.past_upper;
  return Status::Ok();
}

Result<const Listed*> RangeSide::Peek() {
  const std::string upper = upper_();
  while (buf_.empty() && more_) FERRY_RETURN_IF_ERROR(Fill(upper));
  if (buf_.empty() || (!upper.empty() && buf_.front().rel > upper)) return nullptr;
  return &buf_.front();
}

Status ListWhole(const ListFn& list, const std::string& prefix, int chunk, SpillSorter* out,
                 KnownKeys* known, const std::atomic<bool>* stop) {
  ListOptions o;
  o.prefix = prefix;
  o.max_keys = chunk;
  for (;;) {
    if (stop != nullptr && stop->load()) return Status::Cancelled("verify stopped");
    FERRY_ASSIGN_OR_RETURN(ListPage page, list(o));
    for (const ObjectInfo& obj : page.objects) {
      if (obj.key.compare(0, prefix.size(), prefix) != 0) continue;  // a server's mistake
      if (known != nullptr) known->Saw(obj.key);
      FERRY_RETURN_IF_ERROR(out->Add({obj.key.substr(prefix.size()), Pack(obj)}));
    }
    if (!page.truncated) return Status::Ok();
    if (page.next_continuation_token.empty()) {
      return Status::Protocol("listing is truncated but has no continuation token");
    }
    o.continuation_token = page.next_continuation_token;
  }
}

Result<const Listed*> SortedSide::Peek() {
  while (!have_) {
    FERRY_ASSIGN_OR_RETURN(std::optional<SpillRecord> r, sorted_.Next());
    if (!r) return nullptr;
    if (last_ && *last_ == r->key) continue;  // listed twice by a broken server
    if (!Unpack(*r, &head_)) return Status::Corruption("spill record too short");
    last_ = head_.rel;
    have_ = true;
  }
  return &head_;
}

}  // namespace ferry::migrate
