#pragma once
// A segment: one append-only file of cache records (segment_record.h),
// the unit the disk store fills, seals and compacts (disk_store.h).
//
//   DIR/segments/<sequence: 16 hex digits>.seg     (a higher one is newer)
//     0   16  "FERRY-SEGMENT-1\n"
//     16  8   u64 sequence (as in the name)
//     24  8   zero
//     32  ... records back to back, each where the one before ends
//
// Only the store's active segment grows, at its end, and only after
// everything before it was written; so after a crash a segment is a run
// of whole records and, at most, one cut short at its end (a torn tail):
// Scan stops there, and the store truncates it away. A record is killed
// by rewriting its state byte, the only write that is not an append.
//
// Append is called by one thread at a time (the store's write lock); the
// other calls may come from any thread.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cache/segment_record.h"

namespace ferry::cache {

inline constexpr size_t kSegmentHeaderSize = 32;

class Segment {
 public:
  // A new, empty segment file DIR/<seq>.seg (durable when `sync`).
  static Result<std::shared_ptr<Segment>> Create(const std::string& dir, uint64_t seq, bool sync);
  // An existing segment file; kCorruption when its header is not a
  // segment's with this sequence.
  static Result<std::shared_ptr<Segment>> Open(const std::string& path, uint64_t seq);
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  // The file name of segment `seq` ("00000000000000a1.seg"), and the
  // sequence a name stands for (nullopt: not a segment's name).
  static std::string NameOf(uint64_t seq);
  static std::optional<uint64_t> SeqOf(std::string_view name);

  // Appends `record` at the end and returns its offset. On failure the
  // file is cut back to where it ended, so no torn record stays behind.
  // Passes the crash point "segment-append" midway through the record.
  Result<uint64_t> Append(std::string_view record);

  // `length` bytes at `offset`; kCorruption when the file ends first.
  Result<std::string> Read(uint64_t offset, uint64_t length) const;

  // Rewrites the state byte of the record at `offset` to dead.
  Status MarkDead(uint64_t offset);

  Status Sync() const;  // fdatasync

  struct ScanResult {
    uint64_t end = kSegmentHeaderSize;  // just after the last whole record
    uint64_t torn_bytes = 0;            // after `end`: a record cut short, or garbage
    uint64_t corrupt = 0;               // whole records skipped: a checksum failed
  };
  // Calls `found` for each live record, in file order, whose head and
  // metadata check (and, with verify_bodies, whose body checks too); dead
  // records are passed over, bodies unchecked; stops at the
  // first head that is not a record's or a record that runs past the end
  // of the file: that and everything after it is the torn tail.
  using FoundRecord = std::function<void(uint64_t offset, const RecordHead& head, EntryMeta meta)>;
  Result<ScanResult> Scan(bool verify_bodies, const FoundRecord& found) const;

  // Cuts the file at `end` (a torn tail found by Scan).
  Status Truncate(uint64_t end);

  uint64_t seq() const { return seq_; }
  const std::string& path() const { return path_; }
  uint64_t size() const { return size_.load(); }
  // Bytes of disk the file holds (st_blocks * 512).
  uint64_t Allocated() const;

 private:
  Segment(int fd, std::string path, uint64_t seq, uint64_t size) : fd_(fd), path_(std::move(path)), seq_(seq), size_(size) {}

  const int fd_;
  const std::string path_;
  const uint64_t seq_;
  std::atomic<uint64_t> size_;
};

}  // namespace ferry::cache
