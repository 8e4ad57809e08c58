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
#include <memory>
#include <optional>
#include <string>

#include "cache/big_object.h"
#include "cache/entry.h"
#include "cache/freshness.h"
#include "engine/lru_cache.h"

namespace ferry::cache {

struct CachedObject {
  EntryMeta meta;
  std::string body;  // as stored: zstd when meta.encoding says so
  // A big object (big_object.h): its body stays on disk, read through this,
  // and `body` is empty.
  std::shared_ptr<const BigObject> big;
  // Which fill or disk read made it (unique in a process); a decoded copy
  // carries its source's id, so a copy of an older version is never used.
  uint64_t id = 0;
  // Stored, or storable: an answer every client may share (never a
  // private or no-store one). Only such objects become dictionaries or
  // dcz answers.
  bool shareable = false;
  // Derived from meta once, so that a hit parses nothing (freshness.h).
  CacheControl cache_control;
  Seconds lifetime{0};
  bool heuristic = false;  // lifetime from Last-Modified (RFC 9111 4.2.2)
  Seconds initial_age{0};  // the corrected initial age (RFC 9111 4.2.3)
  std::optional<SysSeconds> last_modified;

  Seconds AgeAt(SysSeconds now) const {
    SysSeconds response(Seconds(meta.response_time));
    return initial_age + std::max(Seconds(0), now - response);
  }
};

// A fresh id for a CachedObject.
uint64_t NextObjectId();

// Stored objects by cache key, LRU by stored bytes (engine/lru_cache.h).
class HotSet {
 public:
  explicit HotSet(uint64_t max_bytes) : lru_(max_bytes) {}

  // The object for `key`, now the most recently used; nullptr if absent.
  std::shared_ptr<const CachedObject> Get(const std::string& key) { return lru_.Get(key); }
  // Inserts or replaces; evicts least recently used objects past the
  // budget. An object larger than the whole budget is not kept.
  void Put(std::shared_ptr<const CachedObject> object) {
    const std::string key = object->meta.key;
    const uint64_t cost = Cost(*object);
    lru_.Put(key, std::move(object), cost);
  }
  void Remove(const std::string& key) { lru_.Remove(key); }

  uint64_t bytes() const { return lru_.bytes(); }
  uint64_t entries() const { return lru_.entries(); }

 private:
  // The body and key, and about what the rest of an object takes.
  static uint64_t Cost(const CachedObject& o) { return o.body.size() + o.meta.key.size() + 512; }

  LruCache<CachedObject> lru_;
};

}  // namespace ferry::cache
