// DiskStore's compaction: a sealed segment gone sparse has its live
// records copied, verbatim, to the active segment, and is deleted once the
// copies are durable. Readers are never stopped: a record's index entry
// moves only after its copy is written, and a reader that took the old
// place still reads the old file (deleted files stay readable while open).
#include <set>
#include <vector>

#include <spdlog/spdlog.h>

#include "cache/disk_store.h"
#include "cache/disk_store_internal.h"
#include "cache/segment_record.h"

namespace ferry::cache {

std::optional<uint64_t> DiskStore::PickCompaction() {
  std::lock_guard lock(mu_);
  std::optional<uint64_t> best;
  double best_fraction = options_.compact_below;
  for (auto& [seq, s] : segments_) {
    if (!s.sealed || s.compacting || s.compact_failed) continue;
    double payload = static_cast<double>(s.seg->size() - kSegmentHeaderSize);
    double fraction = payload > 0 ? static_cast<double>(s.live) / payload : 0;
    if (fraction < best_fraction) {
      best = seq;
      best_fraction = fraction;
    }
  }
  if (best) segments_[*best].compacting = true;
  return best;
}

size_t DiskStore::CompactNow() {
  size_t n = 0;
  while (auto seq = PickCompaction()) {
    CompactSegment(*seq);
    n++;
    std::lock_guard lock(compact_mu_);
    if (stop_) break;
  }
  return n;
}

void DiskStore::CompactSegment(uint64_t seq) {
  std::shared_ptr<Segment> seg;
  {
    std::lock_guard lock(mu_);
    seg = segments_.at(seq).seg;
  }
  std::vector<std::pair<uint64_t, std::string>> live;  // offset, key
  auto scan = seg->Scan(false, [&](uint64_t offset, const RecordHead& head, EntryMeta meta) {
    if (head.live) live.emplace_back(offset, std::move(meta.key));
  });
  bool ok = scan.ok();
  std::set<std::shared_ptr<Segment>> written;
  StaleRecords stale;
  for (size_t i = 0; ok && i < live.size(); ++i) {
    std::shared_ptr<Segment> to;
    ok = MoveRecord(seg, live[i].first, live[i].second, &to, &stale);
    if (to) written.insert(to);
  }
  bool durable = true;
  for (const auto& s : written) {
    if (options_.sync && !s->Sync().ok()) ok = durable = false;
  }
  // A folded copy is on disk: the records it replaces may die. (Until then
  // they stay live on disk, and on open the copy, later, wins anyway.)
  if (durable) {
    for (const auto& [from, offset] : stale) (void)from->MarkDead(offset);
  }
  std::lock_guard lock(mu_);
  for (const auto& [from, offset] : stale) {
    if (segments_.count(from->seq())) segments_[from->seq()].unsynced_marks = true;
  }
  SegmentState& s = segments_.at(seq);
  s.compacting = false;
  if (!ok || s.live != 0) {
    // Not tried again until the store is reopened.
    s.compact_failed = true;
    spdlog::warn("cache: segment {} not compacted ({} live bytes left{})", seg->path(), s.live,
                 scan.ok() ? "" : ": " + scan.status().ToString());
    return;
  }
  compactions_++;
  SegmentShrank(seq);  // no live record left: deleted
}

// Copies the record of `key` at `offset` of `from` to the active segment
// and points the index there, unless the key moved on meanwhile (replaced,
// removed, evicted). A refreshed entry (its refresh record or its body's
// record is the one at `offset`) is written as one record again, its
// metadata and body together, and both old records die. False when the
// copy could not be written.
bool DiskStore::MoveRecord(const std::shared_ptr<Segment>& from, uint64_t offset, const std::string& key,
                           std::shared_ptr<Segment>* to, StaleRecords* stale) {
  // A Refresh between the read and the copy changes the entry but leaves
  // its body here: read it again (a few times), so the segment can go.
  for (int attempt = 0; attempt < 3; ++attempt) {
    bool again = false;
    bool ok = MoveRecordOnce(from, offset, key, to, stale, &again);
    if (!again) return ok;
  }
  return true;  // still moving under us: left live; the segment is tried again on reopen
}

bool DiskStore::MoveRecordOnce(const std::shared_ptr<Segment>& from, uint64_t offset, const std::string& key,
                               std::shared_ptr<Segment>* to, StaleRecords* stale, bool* again) {
  Node was;
  {
    std::lock_guard lock(mu_);
    auto it = index_.find(key);
    bool here = it != index_.end() && ((it->second.seg == from && it->second.offset == offset) ||
                                       (it->second.body_seg == from && it->second.body_offset == offset));
    if (!here) return true;
    was = it->second;
  }
  auto same = [&](const Node& n) {
    return n.seg == was.seg && n.offset == was.offset && n.body_seg == was.body_seg && n.body_offset == was.body_offset;
  };
  Result<std::string> record = Status::Ok();
  if (was.body_seg) {
    auto entry = ReadRecords(key, was);
    record = entry.ok() ? EncodeRecord(entry->meta, entry->body) : Result<std::string>(entry.status());
  } else {
    record = from->Read(offset, was.bytes);
    if (record.ok() && !DecodeRecord(*record).ok()) record = Status::Corruption("damaged");
  }
  if (!record.ok()) {  // damaged: dropped, not copied
    std::lock_guard lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end() && same(it->second)) {
      Forget(key, /*unlink_big=*/false);
      corrupt_++;
    }
    return true;
  }
  std::lock_guard wlock(write_mu_);
  auto at = AppendLocked(*record);
  if (!at.ok()) {
    spdlog::warn("cache: compaction: {}", at.status().ToString());
    return false;
  }
  *to = at->first;
  {
    std::lock_guard lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end() || !same(it->second)) {
      (void)at->first->MarkDead(at->second);  // the copy is of nothing now
      segments_[at->first->seq()].unsynced_marks = true;
      *again = it != index_.end() && (it->second.seg == from || it->second.body_seg == from);
    } else {
      Node& n = it->second;
      segments_[n.seg->seq()].live -= n.bytes;
      uint64_t other = 0;  // a refreshed entry's other segment
      if (n.body_seg) {
        segments_[n.body_seg->seq()].live -= n.body_bytes;
        for (const auto& [seg, off] : {std::pair{n.seg, n.offset}, std::pair{n.body_seg, n.body_offset}}) {
          stale->emplace_back(seg, off);  // both: the folded copy replaces them, once durable
          if (seg != from) other = seg->seq();
        }
        bytes_ -= n.bytes + n.body_bytes;
        bytes_ += record->size();
      }
      segments_[at->first->seq()].live += record->size();
      n.seg = at->first;
      n.offset = at->second;
      n.bytes = record->size();
      n.body_seg.reset();
      n.body_offset = n.body_bytes = 0;
      compacted_bytes_ += n.bytes;
      if (other != 0) SegmentShrank(other);
    }
  }
  SealIfFullLocked();
  return true;
}

void DiskStore::CompactorLoop() {
  std::unique_lock lock(compact_mu_);
  for (;;) {
    compact_cv_.wait(lock, [&] { return stop_ || compact_wanted_; });
    if (stop_) return;
    compact_wanted_ = false;
    lock.unlock();
    CompactNow();
    lock.lock();
  }
}

}  // namespace ferry::cache
