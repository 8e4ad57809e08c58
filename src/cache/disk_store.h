#pragma once
// Cache entries on disk, packed densely: small entries (bodies the proxy
// holds in memory) as records appended to segment files (segment.h,
// segment_record.h), big ones (bodies streamed past --max-object) as files
// of their own with a seek table (big_object.h). An in-memory index maps
// each key to where its entry lies and orders entries by last use; past
// `max_bytes` of live entries the least recently used are evicted.
// Thread-safe.
//
// Layout: DIR/segments/<seq>.seg   records; the newest is the one appended to
//         DIR/big/XY/<sha256 of the key, hex>   big objects
//         DIR/tmp/       files being written (big objects, spools); emptied on open
//         DIR/entries/   the layout before segments (one FERRY-CACHE-2 file per
//                        key): migrated into segments on open, then removed
//
// Revalidation. A 304 changes an entry's metadata, not its body: Refresh
// appends a refresh record (segment_record.h: the new metadata and the
// checksum of the body's record) and leaves the body where it is, so a
// hot page revalidated every max-age costs a few hundred bytes each time,
// not its body. On open a refresh record applies to the key's record
// before it when its checksum is that record's body's (else it is dead);
// a later refresh or record of the key replaces it. Compaction copies a
// refreshed entry as one record again (metadata and body together), so a
// body never moves ahead of its refresh.
//
// Crash safety. Records are only ever appended, to one segment at a time,
// each checksummed twice (head and metadata; body), so a crash leaves at
// most one record cut short at the end of the segment being appended: open
// re-reads the newest segments' records whole, cuts off such a torn tail and
// counts it (stats().torn). Every read checks a record's checksums again, so
// damage found later is a miss, counted (corrupt), never an answer. Removing,
// replacing or evicting an entry rewrites its record's state byte to dead
// (synced for Remove: a PURGE stays purged), so it does not come back on
// open; where a key still has two live records (a crash between appending
// the new one and killing the old), the later one wins (segments in sequence
// order, records in file order). Big objects are written under tmp/, synced
// and renamed into place.
//
// The index is rebuilt on open from the segments themselves (each record's
// head and metadata, not its body) and the big objects' headers: there is no
// index file that could disagree with them. Last use is not kept on disk:
// reopened entries are ordered by when their responses came.
//
// Compaction. A sealed segment (one that reached segment_bytes) whose live
// records fall below compact_below of its bytes has them copied forward to
// the active segment, and is deleted; one with no live record left is
// deleted at once. This rather than a ring (a FIFO of segments, live entries
// re-appended when the head comes round, as Traffic Server and Varnish's
// persistent storage do) keeps eviction LRU by bytes; and as LRU evicts
// roughly in write order, segments mostly empty whole and little is copied.
// The disk holds at most the live bytes over compact_below, plus the active
// segment. Compaction runs on a thread of the store's own (or only when
// CompactNow is called, without background_compaction).

#include <condition_variable>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"
#include "cache/big_object.h"
#include "cache/entry.h"
#include "cache/segment.h"

namespace ferry::cache {

struct DiskStoreOptions {
  std::string dir;
  uint64_t max_bytes = 1ull << 30;      // bytes of live entries kept (records and big object files)
  bool sync = true;                     // fsync appends, files and directories (tests may skip)
  uint64_t segment_bytes = 16ull << 20; // a segment is sealed once this long
  double compact_below = 0.5;           // a sealed segment less live than this is compacted
  bool background_compaction = true;    // false: only CompactNow() compacts
};

struct DiskStoreStats {
  uint64_t entries = 0;
  uint64_t big_entries = 0;      // of them, big objects
  uint64_t bytes = 0;            // of live records and big object files
  uint64_t logical_bytes = 0;    // what the live entries decode to
  uint64_t allocated_bytes = 0;  // disk blocks of segments and big objects (st_blocks * 512)
  uint64_t segments = 0;
  uint64_t segment_bytes = 0;    // their lengths, dead records included
  uint64_t evictions = 0;
  uint64_t corrupt = 0;          // damaged entries found (and dropped)
  uint64_t torn = 0;             // segment tails cut short by a crash, found on open
  uint64_t torn_bytes = 0;       // and their bytes
  uint64_t compactions = 0;      // segments compacted and deleted
  uint64_t compacted_bytes = 0;  // live record bytes copied forward by compaction
  uint64_t refreshes = 0;        // entries refreshed in place of rewriting (Refresh)
  uint64_t refresh_bytes = 0;    // bytes their refresh records took
};

// One entry read back.
struct StoredEntry {
  EntryMeta meta;
  std::string body;                       // a small entry's stored body
  std::shared_ptr<const BigObject> big;   // a big object (body empty): read through this
};

class DiskStore {
 public:
  static Result<std::unique_ptr<DiskStore>> Open(DiskStoreOptions options);
  ~DiskStore();  // stops compaction

  // Stores meta.key's entry, replacing any, then evicts least recently
  // used entries until the total fits. An entry larger than max_bytes is
  // not stored (kInvalidArgument). A failed write (a full disk) leaves
  // the previous entry as it was. Durable on return unless `sync` is
  // false: then at the next SyncAppends (a batch's one sync).
  Status Put(const EntryMeta& meta, std::string_view body, bool sync = true);
  // Makes every Put so far durable: one sync of the segment being appended
  // to (a segment is synced when it is sealed).
  Status SyncAppends();

  // Gives meta.key's entry new metadata (a 304's: headers and times)
  // while its body stays as stored: only a refresh record is written.
  // kNotFound when there is no such entry in a segment (none, or a big
  // object); kPreconditionFailed when the stored body is not the one
  // `meta` describes (its length, coding or logical length differ). The
  // caller then stores the whole entry with Put. Durable as Put is.
  Status Refresh(const EntryMeta& meta, bool sync = true);

  // The entry for `key`, or nullopt when there is none. A damaged entry
  // (a checksum, a record cut short, another key's) is dropped, counted,
  // and reported as none.
  Result<std::optional<StoredEntry>> Get(std::string_view key);

  // Removes `key`'s entry, durably; kNotFound when there is none.
  Status Remove(std::string_view key);

  // A big object for meta.key, written as it comes (big_object.h) under
  // tmp/; nothing changes until CommitBig. Dropping the writer abandons it.
  Result<std::unique_ptr<BigObjectWriter>> BeginBig(const EntryMeta& meta, bool compress, int level);
  // Finishes the file and makes it meta.key's entry, replacing any, then
  // evicts as Put does. kInvalidArgument (and nothing kept) when it is
  // larger than max_bytes.
  Status CommitBig(std::unique_ptr<BigObjectWriter> writer);

  // Compacts every sealed segment below compact_below now; how many.
  size_t CompactNow();

  DiskStoreStats stats() const;

 private:
  struct Node {
    std::list<std::string>::iterator lru;  // position in lru_ (front = most recent)
    std::shared_ptr<Segment> seg;          // null: a big object
    uint64_t offset = 0;                   // of the record in seg (a refreshed entry's refresh record)
    uint64_t bytes = 0;                    // the record's, or the big object file's
    // A refreshed entry's body: the record that holds it (null: seg's does).
    std::shared_ptr<Segment> body_seg;
    uint64_t body_offset = 0, body_bytes = 0;
    uint64_t logical = 0;
    uint64_t allocated = 0;                // a big object file's blocks
    uint64_t id = 0;                       // which insertion (set by Insert)
  };
  struct SegmentState {
    std::shared_ptr<Segment> seg;
    uint64_t live = 0;         // bytes of records the index points at
    bool sealed = false;       // full: no longer appended to
    bool unsynced_marks = false;
    bool compacting = false;   // its records are being copied: not deleted meanwhile
    bool compact_failed = false;
  };
  // A record or big object found on open, before it is indexed.
  struct Found;

  explicit DiskStore(DiskStoreOptions options) : options_(std::move(options)) {}

  // Opening (disk_store_open.cc).
  Status Load();
  Status LoadSegments(std::unordered_map<std::string, Found>* found);
  void LoadBigObjects(std::unordered_map<std::string, Found>* found);
  void Adopt(std::unordered_map<std::string, Found>* found);
  void MigrateOldLayout();
  static void Bury(const Found& f, const std::string& big_path);
  static void Refreshed(std::unordered_map<std::string, Found>* found, const Found& f, const RecordHead& head,
                        const std::string& key);

  // Appending (write_mu_ held): the segment and offset `record` went to.
  Result<std::pair<std::shared_ptr<Segment>, uint64_t>> AppendLocked(std::string_view record);
  void SealIfFullLocked();  // write_mu_ held, not mu_

  std::string BigPath(const std::string& key) const;
  // An entry's metadata and body from its record(s); kCorruption when they
  // do not check or are not `key`'s.
  static Result<StoredEntry> ReadRecords(const std::string& key, const Node& n);
  // mu_ held: the index's bookkeeping.
  void Insert(const std::string& key, Node node);
  void Forget(const std::string& key, bool unlink_big);
  void EvictOverLimit();
  void Touch(Node& node);
  void SegmentShrank(uint64_t seq);  // delete it or ask for compaction

  // Compaction (disk_store_compact.cc).
  std::optional<uint64_t> PickCompaction();
  void CompactSegment(uint64_t seq);
  // Records a move made stale (a refreshed entry's two, folded into one
  // copy): marked dead only once the copy is durable.
  using StaleRecords = std::vector<std::pair<std::shared_ptr<Segment>, uint64_t>>;
  bool MoveRecord(const std::shared_ptr<Segment>& from, uint64_t offset, const std::string& key,
                  std::shared_ptr<Segment>* to, StaleRecords* stale);
  // One try; *again when the entry changed meanwhile but is still in `from`.
  bool MoveRecordOnce(const std::shared_ptr<Segment>& from, uint64_t offset, const std::string& key,
                      std::shared_ptr<Segment>* to, StaleRecords* stale, bool* again);
  void CompactorLoop();

  const DiskStoreOptions options_;

  std::mutex write_mu_;                        // taken before mu_
  std::shared_ptr<Segment> active_;            // guarded by write_mu_; null until the first append
  uint64_t next_seq_ = 1;                      // guarded by write_mu_

  mutable std::mutex mu_;
  std::list<std::string> lru_;                       // guarded by mu_
  std::unordered_map<std::string, Node> index_;      // guarded by mu_
  std::map<uint64_t, SegmentState> segments_;        // guarded by mu_
  uint64_t bytes_ = 0, logical_ = 0;                 // guarded by mu_
  uint64_t big_entries_ = 0, big_allocated_ = 0;     // guarded by mu_
  uint64_t evictions_ = 0, corrupt_ = 0;             // guarded by mu_
  uint64_t torn_ = 0, torn_bytes_ = 0;               // guarded by mu_
  uint64_t compactions_ = 0, compacted_bytes_ = 0;   // guarded by mu_
  uint64_t refreshes_ = 0, refresh_bytes_ = 0;       // guarded by mu_
  uint64_t next_id_ = 1;                             // guarded by mu_

  std::mutex compact_mu_;                      // taken after mu_
  std::condition_variable compact_cv_;
  bool compact_wanted_ = false;                // guarded by compact_mu_
  bool stop_ = false;                          // guarded by compact_mu_
  std::thread compactor_;
};

}  // namespace ferry::cache
