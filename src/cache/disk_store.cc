// DiskStore's entries: puts, gets, removal, big objects and the index's
// bookkeeping (opening in disk_store_open.cc, compaction in
// disk_store_compact.cc).
#include "cache/disk_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include <spdlog/spdlog.h>

#include "base/atomic_file.h"
#include "cache/bytes.h"
#include "cache/disk_store_internal.h"
#include "cache/segment_record.h"
#include "store/local/fs_util.h"

namespace ferry::cache {

using namespace disk_store_detail;  // NOLINT: the store's own helpers

Result<std::unique_ptr<DiskStore>> DiskStore::Open(DiskStoreOptions options) {
  if (options.dir.empty()) return Status::InvalidArgument("cache directory not set");
  if (!(options.compact_below >= 0 && options.compact_below < 1)) {
    return Status::InvalidArgument("compact_below must be in [0, 1)");
  }
  std::unique_ptr<DiskStore> s(new DiskStore(std::move(options)));
  FERRY_RETURN_IF_ERROR(s->Load());
  if (s->options_.background_compaction) s->compactor_ = std::thread([p = s.get()] { p->CompactorLoop(); });
  return s;
}

DiskStore::~DiskStore() {
  {
    std::lock_guard lock(compact_mu_);
    stop_ = true;
  }
  compact_cv_.notify_all();
  if (compactor_.joinable()) compactor_.join();
}

std::string DiskStore::BigPath(const std::string& key) const {
  std::string hash = HashOf(key);
  return options_.dir + "/big/" + hash.substr(0, 2) + "/" + hash;
}

Status DiskStore::Put(const EntryMeta& meta, std::string_view body, bool sync) {
  FERRY_ASSIGN_OR_RETURN(std::string record, EncodeRecord(meta, body));
  if (record.size() > options_.max_bytes) {
    return Status::InvalidArgument("entry of " + std::to_string(record.size()) + " bytes is larger than the cache");
  }
  std::shared_ptr<Segment> seg;
  {
    std::lock_guard wlock(write_mu_);
    FERRY_ASSIGN_OR_RETURN(auto at, AppendLocked(record));
    seg = at.first;
    {
      std::lock_guard lock(mu_);
      Node n;
      n.seg = seg;
      n.offset = at.second;
      n.bytes = record.size();
      n.logical = meta.logical_length;
      Insert(meta.key, std::move(n));
      EvictOverLimit();
    }
    SealIfFullLocked();
  }
  if (options_.sync && sync) return seg->Sync();
  return Status::Ok();
}

Status DiskStore::SyncAppends() {
  if (!options_.sync) return Status::Ok();
  std::shared_ptr<Segment> seg;
  {
    std::lock_guard wlock(write_mu_);
    seg = active_;
  }
  return seg ? seg->Sync() : Status::Ok();
}

Result<std::optional<StoredEntry>> DiskStore::Get(std::string_view key_view) {
  std::string key(key_view);
  Node n;
  {
    std::lock_guard lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return std::optional<StoredEntry>();
    Touch(it->second);
    n = it->second;
  }
  StoredEntry out;
  Status damage;
  if (n.seg) {
    auto read = ReadRecords(key, n);
    if (read.ok()) return std::optional<StoredEntry>(std::move(read).value());
    damage = read.status();
  } else {
    auto big = BigObject::Open(BigPath(key));
    if (!big.ok() && big.status().code() == ErrorCode::kNotFound) return std::optional<StoredEntry>();  // evicted meanwhile
    if (big.ok() && (*big)->meta().key == key) {
      out.meta = (*big)->meta();
      out.big = std::move(big).value();
      return std::optional<StoredEntry>(std::move(out));
    }
    damage = big.ok() ? Status::Corruption("a big object of another key") : big.status();
  }
  spdlog::warn("cache: a damaged entry dropped: {}", damage.ToString());
  std::lock_guard lock(mu_);
  auto it = index_.find(key);
  if (it != index_.end() && it->second.id == n.id) {
    Forget(key, /*unlink_big=*/true);
    corrupt_++;
  }
  return std::optional<StoredEntry>();
}

Result<StoredEntry> DiskStore::ReadRecords(const std::string& key, const Node& n) {
  auto decoded_at = [&](const std::shared_ptr<Segment>& seg, uint64_t offset, uint64_t bytes,
                        std::string* keep) -> Result<DecodedRecord> {
    FERRY_ASSIGN_OR_RETURN(*keep, seg->Read(offset, bytes));
    FERRY_ASSIGN_OR_RETURN(DecodedRecord d, DecodeRecord(*keep));
    if (d.meta.key != key) return Status::Corruption("a record of another key");
    return d;
  };
  std::string head_bytes, body_bytes;
  FERRY_ASSIGN_OR_RETURN(DecodedRecord head, decoded_at(n.seg, n.offset, n.bytes, &head_bytes));
  StoredEntry out;
  if (!n.body_seg) {
    if (head.head.refresh) return Status::Corruption("a refresh record without its body");
    out.meta = std::move(head.meta);
    out.body = std::string(head.body);
    return out;
  }
  FERRY_ASSIGN_OR_RETURN(DecodedRecord body, decoded_at(n.body_seg, n.body_offset, n.body_bytes, &body_bytes));
  if (!head.head.refresh || body.head.refresh || head.refers_to != body.body_sum ||
      head.meta.stored_length != body.body.size() || head.meta.encoding != body.meta.encoding) {
    return Status::Corruption("a refresh record that does not match its body's record");
  }
  out.meta = std::move(head.meta);
  out.body = std::string(body.body);
  return out;
}

Status DiskStore::Refresh(const EntryMeta& meta, bool sync) {
  std::shared_ptr<Segment> seg;
  {
    std::lock_guard wlock(write_mu_);  // no Put, Refresh or compaction move of the key meanwhile
    Node n;
    {
      std::lock_guard lock(mu_);
      auto it = index_.find(meta.key);
      if (it == index_.end() || !it->second.seg) return Status(ErrorCode::kNotFound, "no stored record to refresh");
      n = it->second;
    }
    // The body's record: its head and metadata (checked) and its body checksum.
    const std::shared_ptr<Segment>& bseg = n.body_seg ? n.body_seg : n.seg;
    const uint64_t boff = n.body_seg ? n.body_offset : n.offset, bbytes = n.body_seg ? n.body_bytes : n.bytes;
    FERRY_ASSIGN_OR_RETURN(std::string prefix, bseg->Read(boff, kRecordHeadSize));
    FERRY_ASSIGN_OR_RETURN(RecordHead h, ParseRecordHead(prefix));
    FERRY_ASSIGN_OR_RETURN(prefix, bseg->Read(boff, kRecordHeadSize + h.meta_length));
    FERRY_ASSIGN_OR_RETURN(EntryMeta stored, DecodeRecordMeta(h, prefix));
    if (h.refresh || stored.key != meta.key || h.body_length != meta.stored_length ||
        stored.encoding != meta.encoding || stored.logical_length != meta.logical_length) {
      return Status(ErrorCode::kPreconditionFailed, "the stored body is not the one refreshed");
    }
    FERRY_ASSIGN_OR_RETURN(std::string tail, bseg->Read(boff + bbytes - kRecordTailSize, kRecordTailSize));
    FERRY_ASSIGN_OR_RETURN(std::string record, EncodeRefreshRecord(meta, LoadFixed(tail.data(), 8)));
    FERRY_ASSIGN_OR_RETURN(auto at, AppendLocked(record));
    seg = at.first;
    {
      std::lock_guard lock(mu_);
      auto it = index_.find(meta.key);
      if (it == index_.end() || it->second.id != n.id) {  // replaced or evicted meanwhile
        (void)seg->MarkDead(at.second);
        segments_[seg->seq()].unsynced_marks = true;
      } else {
        Node& cur = it->second;
        uint64_t old_seq = cur.seg->seq();
        if (cur.body_seg) {  // the refresh record it had is replaced
          SegmentState& old = segments_[old_seq];
          old.live -= cur.bytes;
          old.unsynced_marks = true;
          bytes_ -= cur.bytes;
          if (Status st = cur.seg->MarkDead(cur.offset); !st.ok()) spdlog::warn("cache: {}", st.ToString());
        } else {  // its record holds the body from now on
          cur.body_seg = cur.seg;
          cur.body_offset = cur.offset;
          cur.body_bytes = cur.bytes;
        }
        cur.seg = seg;
        cur.offset = at.second;
        cur.bytes = record.size();
        bytes_ += record.size();
        segments_[seg->seq()].live += record.size();
        Touch(cur);
        refreshes_++;
        refresh_bytes_ += record.size();
        SegmentShrank(old_seq);
        EvictOverLimit();
      }
    }
    SealIfFullLocked();
  }
  if (options_.sync && sync) return seg->Sync();
  return Status::Ok();
}

Status DiskStore::Remove(std::string_view key_view) {
  std::string key(key_view);
  std::vector<std::shared_ptr<Segment>> to_sync;
  bool big = false;
  {
    std::lock_guard lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return Status(ErrorCode::kNotFound, "no entry");
    big = it->second.seg == nullptr;
    Forget(key, /*unlink_big=*/true);
    // Every mark not yet durable, this one and those of the records it
    // replaced: none of them may come back.
    for (auto& [seq, s] : segments_) {
      if (s.unsynced_marks) to_sync.push_back(s.seg);
      s.unsynced_marks = false;
    }
  }
  if (!options_.sync) return Status::Ok();
  for (const auto& seg : to_sync) FERRY_RETURN_IF_ERROR(seg->Sync());
  if (!big) return Status::Ok();
  std::string path = BigPath(key);
  return FsyncDir(path.substr(0, path.rfind('/')));
}

Result<std::unique_ptr<BigObjectWriter>> DiskStore::BeginBig(const EntryMeta& meta, bool compress, int level) {
  return BigObjectWriter::Create(options_.dir + "/tmp/big." + local::RandomHex(16), meta, compress, level);
}

Status DiskStore::CommitBig(std::unique_ptr<BigObjectWriter> writer) {
  FERRY_RETURN_IF_ERROR(writer->Finish(options_.sync));
  if (writer->file_size() > options_.max_bytes) {
    return Status::InvalidArgument("big object of " + std::to_string(writer->file_size()) +
                                   " bytes is larger than the cache");
  }
  const EntryMeta& m = writer->meta();
  std::string path = BigPath(m.key);
  std::string sub = path.substr(0, path.rfind('/'));
  FERRY_RETURN_IF_ERROR(MakeDir(sub));
  struct stat st {};
  uint64_t allocated = ::stat(writer->path().c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_blocks) * 512 : 0;
  {
    std::lock_guard lock(mu_);
    if (::rename(writer->path().c_str(), path.c_str()) != 0) return Status::FromErrno(errno, "rename to " + path);
    writer->Release();
    // The file it replaced, if any, is gone already: the rename took its name.
    if (index_.count(m.key)) Forget(m.key, /*unlink_big=*/false);
    Node n;
    n.bytes = writer->file_size();
    n.logical = m.logical_length;
    n.allocated = allocated;
    Insert(m.key, std::move(n));
    EvictOverLimit();
  }
  return options_.sync ? FsyncDir(sub) : Status::Ok();
}

DiskStoreStats DiskStore::stats() const {
  std::lock_guard lock(mu_);
  DiskStoreStats s;
  s.entries = index_.size();
  s.big_entries = big_entries_;
  s.bytes = bytes_;
  s.logical_bytes = logical_;
  s.allocated_bytes = big_allocated_;
  for (const auto& [seq, st] : segments_) {
    s.allocated_bytes += st.seg->Allocated();
    s.segment_bytes += st.seg->size();
  }
  s.segments = segments_.size();
  s.evictions = evictions_;
  s.corrupt = corrupt_;
  s.torn = torn_;
  s.torn_bytes = torn_bytes_;
  s.compactions = compactions_;
  s.compacted_bytes = compacted_bytes_;
  s.refreshes = refreshes_;
  s.refresh_bytes = refresh_bytes_;
  return s;
}

Result<std::pair<std::shared_ptr<Segment>, uint64_t>> DiskStore::AppendLocked(std::string_view record) {
  if (!active_) {
    FERRY_ASSIGN_OR_RETURN(active_, Segment::Create(options_.dir + "/segments", next_seq_, options_.sync));
    next_seq_++;
    std::lock_guard lock(mu_);
    segments_[active_->seq()].seg = active_;
  }
  FERRY_ASSIGN_OR_RETURN(uint64_t offset, active_->Append(record));
  return std::make_pair(active_, offset);
}

void DiskStore::SealIfFullLocked() {
  if (!active_ || active_->size() < options_.segment_bytes) return;
  if (options_.sync) (void)active_->Sync();
  std::lock_guard lock(mu_);
  segments_[active_->seq()].sealed = true;
  SegmentShrank(active_->seq());
  active_.reset();
}

void DiskStore::Insert(const std::string& key, Node node) {
  if (index_.count(key)) Forget(key, /*unlink_big=*/node.seg != nullptr);
  lru_.push_front(key);
  node.lru = lru_.begin();
  node.id = next_id_++;
  bytes_ += node.bytes + node.body_bytes;
  logical_ += node.logical;
  if (node.seg) {
    segments_[node.seg->seq()].live += node.bytes;
    if (node.body_seg) segments_[node.body_seg->seq()].live += node.body_bytes;
  } else {
    big_entries_++;
    big_allocated_ += node.allocated;
  }
  index_[key] = std::move(node);
}

void DiskStore::Forget(const std::string& key, bool unlink_big) {
  auto it = index_.find(key);
  if (it == index_.end()) return;
  Node& n = it->second;
  bytes_ -= n.bytes + n.body_bytes;
  logical_ -= n.logical;
  if (n.seg) {
    auto kill = [&](const std::shared_ptr<Segment>& seg, uint64_t offset, uint64_t bytes) {
      SegmentState& s = segments_[seg->seq()];
      s.live -= bytes;
      s.unsynced_marks = true;
      if (Status st = seg->MarkDead(offset); !st.ok()) spdlog::warn("cache: {}", st.ToString());
    };
    kill(n.seg, n.offset, n.bytes);
    uint64_t seq = n.seg->seq(), body_seq = 0;
    if (n.body_seg) {
      kill(n.body_seg, n.body_offset, n.body_bytes);
      body_seq = n.body_seg->seq();
    }
    lru_.erase(n.lru);
    index_.erase(it);
    SegmentShrank(seq);
    if (body_seq != 0 && body_seq != seq) SegmentShrank(body_seq);
    return;
  }
  big_entries_--;
  big_allocated_ -= n.allocated;
  if (unlink_big) ::unlink(BigPath(key).c_str());
  lru_.erase(n.lru);
  index_.erase(it);
}

void DiskStore::Touch(Node& n) { lru_.splice(lru_.begin(), lru_, n.lru); }

void DiskStore::EvictOverLimit() {
  while (bytes_ > options_.max_bytes && !lru_.empty()) {
    std::string victim = lru_.back();
    Forget(victim, /*unlink_big=*/true);
    evictions_++;
  }
}

void DiskStore::SegmentShrank(uint64_t seq) {
  auto it = segments_.find(seq);
  if (it == segments_.end() || !it->second.sealed || it->second.compacting) return;
  SegmentState& s = it->second;
  if (s.live == 0) {
    ::unlink(s.seg->path().c_str());  // readers holding it still read it
    segments_.erase(it);
    return;
  }
  uint64_t payload = s.seg->size() - kSegmentHeaderSize;
  if (!s.compact_failed && static_cast<double>(s.live) < options_.compact_below * static_cast<double>(payload)) {
    std::lock_guard lock(compact_mu_);
    compact_wanted_ = true;
    compact_cv_.notify_all();
  }
}

}  // namespace ferry::cache
