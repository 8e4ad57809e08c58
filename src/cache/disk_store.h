#pragma once
// Cache entries on disk: one self-checking file per key (entry.h), written
// to a temporary file, synced and renamed into place, so a crash leaves
// the old entry, the new one or none, never a torn one that is served. An
// in-memory index orders entries by last use; storing past `max_bytes`
// evicts the least recently used. Opening a directory again finds its
// entries (last use from their modification times) without reading them.
// Thread-safe.
//
// Layout: DIR/entries/XY/<sha256 of the key, hex>  (XY: its first 2 digits)
//         DIR/tmp/       files being written; emptied on open

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/status.h"
#include "cache/entry.h"

namespace ferry::cache {

struct DiskStoreOptions {
  std::string dir;
  uint64_t max_bytes = 1ull << 30;  // bytes of entry files kept
  bool sync = true;                 // fsync files and directories (tests may skip)
};

struct DiskStoreStats {
  uint64_t entries = 0;
  uint64_t bytes = 0;      // of entry files
  uint64_t evictions = 0;
  uint64_t corrupt = 0;    // damaged entries found (and removed)
};

// One entry read back: the file's bytes and the checked view into them.
struct StoredEntry {
  std::string file;
  DecodedEntry entry;  // views into `file`
};

class DiskStore {
 public:
  static Result<std::unique_ptr<DiskStore>> Open(DiskStoreOptions options);

  // Stores meta.key's entry, replacing any, then evicts least recently
  // used entries until the total fits. An entry larger than max_bytes is
  // not stored (kInvalidArgument). A failed write (a full disk) leaves
  // the previous entry as it was.
  Status Put(const EntryMeta& meta, std::string_view body);

  // The entry for `key`, or nullopt when there is none. A damaged entry
  // (checksum, truncation, another key's file) is removed, counted, and
  // reported as none.
  Result<std::optional<StoredEntry>> Get(std::string_view key);

  // Removes `key`'s entry; kNotFound when there is none.
  Status Remove(std::string_view key);

  DiskStoreStats stats() const;

 private:
  struct Node {
    std::list<std::string>::iterator lru;  // position in lru_ (front = most recent)
    uint64_t bytes;
  };

  explicit DiskStore(DiskStoreOptions options) : options_(std::move(options)) {}
  Status Load();
  std::string PathOf(const std::string& hash) const;
  void Forget(const std::string& hash);           // mu_ held
  void EvictOverLimit();                          // mu_ held
  void Touch(const std::string& hash);            // mu_ held

  DiskStoreOptions options_;
  mutable std::mutex mu_;
  std::list<std::string> lru_;                    // guarded by mu_
  std::unordered_map<std::string, Node> index_;   // guarded by mu_
  uint64_t bytes_ = 0;                            // guarded by mu_
  uint64_t evictions_ = 0;                        // guarded by mu_
  uint64_t corrupt_ = 0;                          // guarded by mu_
};

}  // namespace ferry::cache
