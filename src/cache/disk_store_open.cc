// DiskStore's opening: the index rebuilt from the segments' records and
// the big objects' headers, torn tails cut off, the previous layout moved
// into segments.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <tuple>
#include <vector>

#include <spdlog/spdlog.h>

#include "cache/disk_store.h"
#include "cache/bytes.h"
#include "cache/disk_store_internal.h"
#include "store/local/fs_util.h"

namespace ferry::cache {

using namespace disk_store_detail;  // NOLINT: the store's own helpers

namespace {

// The newest segments may end in appends a crash cut short: their records
// are read whole on open, bodies checked, rather than head and metadata.
constexpr size_t kVerifiedSegments = 2;

}  // namespace

struct DiskStore::Found {
  std::shared_ptr<Segment> seg;  // null: a big object
  uint64_t offset = 0;           // (a refreshed entry's: its refresh record)
  uint64_t bytes = 0;
  uint64_t logical = 0;
  uint64_t allocated = 0;
  // When it was written: when its response came (a file's mtime changes
  // with every record killed in it), then its place among the records.
  std::tuple<int64_t, uint64_t, uint64_t> written;
  std::shared_ptr<Segment> body_seg;  // a refreshed entry's body record (null: none)
  uint64_t body_offset = 0, body_bytes = 0;
};

namespace {

// The 8 bytes at `at` of `seg` as a number (a body checksum, a reference);
// nullopt when they cannot be read.
std::optional<uint64_t> Fixed8(const Segment& seg, uint64_t at) {
  auto b = seg.Read(at, 8);
  if (!b.ok()) return std::nullopt;
  return LoadFixed(b->data(), 8);
}

}  // namespace

Status DiskStore::Load() {
  const std::string& dir = options_.dir;
  for (const char* sub : {"", "/segments", "/big", "/tmp"}) FERRY_RETURN_IF_ERROR(MakeDir(dir + sub));
  // Writes a crash interrupted never became entries.
  for (const std::string& n : ListDir(dir + "/tmp")) ::unlink((dir + "/tmp/" + n).c_str());
  std::unordered_map<std::string, Found> found;
  FERRY_RETURN_IF_ERROR(LoadSegments(&found));
  LoadBigObjects(&found);
  Adopt(&found);
  MigrateOldLayout();
  return Status::Ok();
}

Status DiskStore::LoadSegments(std::unordered_map<std::string, Found>* found) {
  const std::string dir = options_.dir + "/segments";
  std::vector<std::pair<uint64_t, std::string>> names;
  for (const std::string& n : ListDir(dir)) {
    if (auto seq = Segment::SeqOf(n)) names.emplace_back(*seq, dir + "/" + n);
  }
  std::sort(names.begin(), names.end());
  for (size_t i = 0; i < names.size(); ++i) {
    const uint64_t seq = names[i].first;
    const std::string& path = names[i].second;
    next_seq_ = std::max(next_seq_, seq + 1);
    auto seg = Segment::Open(path, seq);
    if (!seg.ok()) {
      spdlog::warn("cache: {} left alone: {}", path, seg.status().ToString());
      continue;
    }
    auto scan = (*seg)->Scan(i + kVerifiedSegments >= names.size(), [&](uint64_t offset, const RecordHead& head,
                                                                          EntryMeta meta) {
      Found f{*seg, offset, head.size(), meta.logical_length, 0, {meta.response_time, seq, offset}};
      if (head.refresh) {
        Refreshed(found, f, head, meta.key);
        return;
      }
      auto [it, fresh] = found->try_emplace(meta.key, f);
      if (!fresh) {
        Bury(it->second, BigPath(meta.key));  // an earlier record of the key
        it->second = f;
      }
    });
    if (!scan.ok()) return scan.status();
    corrupt_ += scan->corrupt;
    if (scan->torn_bytes > 0) {
      spdlog::warn("cache: {}: {} bytes cut short at its end (a crash mid-append) dropped", path, scan->torn_bytes);
      torn_++;
      torn_bytes_ += scan->torn_bytes;
      FERRY_RETURN_IF_ERROR((*seg)->Truncate(scan->end));
    }
    SegmentState& s = segments_[seq];
    s.seg = *seg;
    s.sealed = true;  // appends go to a new segment
  }
  return Status::Ok();
}

// A refresh record found on open: it applies to the key's record before it
// when it refers to that record's body, and replaces the refresh that
// record had; otherwise it is dead.
void DiskStore::Refreshed(std::unordered_map<std::string, Found>* found, const Found& f, const RecordHead& head,
                          const std::string& key) {
  auto it = found->find(key);
  Found* cur = it == found->end() || !it->second.seg ? nullptr : &it->second;
  if (cur) {
    const std::shared_ptr<Segment>& bseg = cur->body_seg ? cur->body_seg : cur->seg;
    uint64_t boff = cur->body_seg ? cur->body_offset : cur->offset;
    uint64_t bbytes = cur->body_seg ? cur->body_bytes : cur->bytes;
    auto body_sum = Fixed8(*bseg, boff + bbytes - kRecordTailSize);
    auto refers_to = Fixed8(*f.seg, f.offset + kRecordHeadSize + head.meta_length);
    if (!body_sum || body_sum != refers_to) cur = nullptr;
  }
  if (!cur) {
    (void)f.seg->MarkDead(f.offset);  // its body is gone (replaced, removed or damaged)
    return;
  }
  if (cur->body_seg) {
    (void)cur->seg->MarkDead(cur->offset);  // the refresh before it
  } else {
    cur->body_seg = cur->seg;
    cur->body_offset = cur->offset;
    cur->body_bytes = cur->bytes;
  }
  Found refreshed = f;
  refreshed.body_seg = cur->body_seg;
  refreshed.body_offset = cur->body_offset;
  refreshed.body_bytes = cur->body_bytes;
  *cur = refreshed;
}

void DiskStore::LoadBigObjects(std::unordered_map<std::string, Found>* found) {
  const std::string dir = options_.dir + "/big";
  for (const std::string& sub : ListDir(dir)) {
    for (const std::string& n : ListDir(dir + "/" + sub)) {
      std::string path = dir + "/" + sub + "/" + n;
      if (!IsHashName(n) || n.substr(0, 2) != sub) continue;  // not ours: left alone
      auto big = BigObject::Open(path);
      if (!big.ok() || HashOf((*big)->meta().key) != n) {
        spdlog::warn("cache: a damaged big object dropped: {}",
                     big.ok() ? path + " holds another key" : big.status().ToString());
        ::unlink(path.c_str());
        corrupt_++;
        continue;
      }
      const EntryMeta& m = (*big)->meta();
      Found f{nullptr, 0, (*big)->file_size(), m.logical_length, (*big)->Allocated(), {m.response_time, 0, 0}};
      auto [it, fresh] = found->try_emplace(m.key, f);
      if (fresh) continue;
      if (it->second.written > f.written) {
        Bury(f, path);
      } else {
        Bury(it->second, path);
        it->second = f;
      }
    }
  }
}

void DiskStore::Adopt(std::unordered_map<std::string, Found>* found) {
  std::vector<std::pair<const std::string*, const Found*>> order;
  order.reserve(found->size());
  for (const auto& [key, f] : *found) order.emplace_back(&key, &f);
  // Oldest first: each Insert goes to the front, so the newest ends there.
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second->written < b.second->written; });
  std::lock_guard lock(mu_);
  for (const auto& [key, f] : order) {
    Node n;
    n.seg = f->seg;
    n.offset = f->offset;
    n.bytes = f->bytes;
    n.logical = f->logical;
    n.allocated = f->allocated;
    n.body_seg = f->body_seg;
    n.body_offset = f->body_offset;
    n.body_bytes = f->body_bytes;
    Insert(*key, std::move(n));
  }
  std::vector<uint64_t> seqs;
  for (const auto& [seq, s] : segments_) seqs.push_back(seq);
  for (uint64_t seq : seqs) SegmentShrank(seq);  // empty ones go; sparse ones are compacted
  EvictOverLimit();  // a smaller --max-size than last time
}

void DiskStore::MigrateOldLayout() {
  const std::string old = options_.dir + "/entries";
  struct stat st {};
  if (::stat(old.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;
  size_t moved = 0, dropped = 0;
  for (const std::string& sub : ListDir(old)) {
    for (const std::string& n : ListDir(old + "/" + sub)) {
      std::string path = old + "/" + sub + "/" + n;
      auto bytes = local::ReadSmallFile(path, static_cast<size_t>(options_.max_bytes));
      auto entry = bytes.ok() ? DecodeEntry(*bytes) : Result<DecodedEntry>(bytes.status());
      bool kept = entry.ok() && HashOf(entry->meta.key) == n && Put(entry->meta, entry->body).ok();
      (kept ? moved : dropped)++;
      ::unlink(path.c_str());
    }
  }
  (void)local::RemoveTree(old);
  spdlog::info("cache: moved {} entries of the previous layout ({}/) into segments; {} damaged or too large, dropped",
               moved, old, dropped);
}

// The loser of two entries found for one key: dead on disk too.
void DiskStore::Bury(const Found& f, const std::string& big_path) {
  if (f.seg) {
    (void)f.seg->MarkDead(f.offset);
    if (f.body_seg) (void)f.body_seg->MarkDead(f.body_offset);
  } else {
    ::unlink(big_path.c_str());
  }
}

}  // namespace ferry::cache
