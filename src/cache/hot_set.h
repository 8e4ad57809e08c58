#pragma once
// The cache's memory tier: recently used entries, parsed and checked, kept
// in RAM (LRU by stored bytes against `max_bytes`) so a hit costs no disk
// read, no checksum and no metadata parsing — the role Varnish's malloc
// storage and the page cache under nginx play. Entries are immutable and
// shared: a reader keeps its object alive while it is being sent even if
// it is evicted or replaced meanwhile. Every object here is also on disk
// (or was refused by a full disk); the disk store stays the record.
// Thread-safe.

#include <algorithm>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "cache/entry.h"
#include "cache/freshness.h"

namespace ferry::cache {

struct CachedObject {
  EntryMeta meta;
  std::string body;  // as stored: zstd when meta.encoding says so
  // Which fill or disk read made it (unique in a process); a decoded copy
  // carries its source's id, so a copy of an older version is never used.
  uint64_t id = 0;
  // Derived from meta once, so that a hit parses nothing (freshness.h).
  CacheControl cache_control;
  Seconds lifetime{0};
  Seconds initial_age{0};  // the corrected initial age (RFC 9111 4.2.3)
  std::optional<SysSeconds> last_modified;

  Seconds AgeAt(SysSeconds now) const {
    SysSeconds response(Seconds(meta.response_time));
    return initial_age + std::max(Seconds(0), now - response);
  }
};

// A fresh id for a CachedObject.
uint64_t NextObjectId();

class HotSet {
 public:
  explicit HotSet(uint64_t max_bytes) : max_bytes_(max_bytes) {}

  // The object for `key`, now the most recently used; nullptr if absent.
  std::shared_ptr<const CachedObject> Get(const std::string& key);
  // Inserts or replaces; evicts least recently used objects past the
  // budget. An object larger than the whole budget is not kept.
  void Put(std::shared_ptr<const CachedObject> object);
  void Remove(const std::string& key);

  uint64_t bytes() const;
  uint64_t entries() const;

 private:
  struct Node {
    std::shared_ptr<const CachedObject> object;
    std::list<std::string>::iterator lru;
  };
  static uint64_t Cost(const CachedObject& o) { return o.body.size() + o.meta.key.size() + 512; }
  void EraseLocked(std::unordered_map<std::string, Node>::iterator it);

  const uint64_t max_bytes_;
  mutable std::mutex mu_;
  std::list<std::string> lru_;                   // front = most recent; guarded by mu_
  std::unordered_map<std::string, Node> index_;  // guarded by mu_
  uint64_t bytes_ = 0;                           // guarded by mu_
};

}  // namespace ferry::cache
