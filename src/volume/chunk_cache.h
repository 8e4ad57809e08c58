#pragma once
// The transfer cache shared by every volume of a daemon: chunks by hash,
// kept zstd-compressed in memory (LRU by stored bytes), with concurrent
// fetches of one chunk sharing one fetch from the source behind it. A
// hundred clones of one image read each of its chunks from the object
// store once. Thread-safe.
//
// The chunks hit most recently are also kept decoded, in a small tier of
// their own (a quarter of the budget, at most 64 MiB, counted apart from
// it): a thousand clones booting at once hit the same few hundred chunks a
// thousand times each, and a copy costs a tenth of a zstd decode.
//
// Admission: by default every fetched chunk is kept. With
// KeepOnlyWhenShared(), a chunk is kept only while more than one consumer
// is registered (the daemon registers each volume still hydrating from this
// cache's repository): one volume hydrating alone will not ask for its
// chunks again, and compressing them into memory would cost it about as
// much CPU as the rest of hydration together. A clone made later, after
// the others finished, fetches from the origin what was not kept.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/single_flight.h"
#include "engine/lru_cache.h"
#include "volume/chunk_source.h"

namespace ferry::volume {

struct ChunkCacheStats {
  uint64_t hits = 0, misses = 0, coalesced = 0;
  uint64_t source_bytes = 0;  // chunk bytes fetched from the source
  uint64_t stored_bytes = 0;  // compressed bytes in memory now
  uint64_t hot_bytes = 0;     // decoded bytes of the hottest chunks, besides
  uint64_t hot_hits = 0;      // hits served from those without a decode
  uint64_t passed = 0;        // fetched chunks not kept (admission said no)
};

class ChunkCache : public ChunkSource {
 public:
  ChunkCache(ChunkSource* source, uint64_t max_bytes, int level = 3);
  // The decoded tier's budget for a cache of `max_bytes`.
  static uint64_t HotBytes(uint64_t max_bytes) { return std::min<uint64_t>(max_bytes / 4, 64ull << 20); }
  Result<std::string> Fetch(const std::string& hash, bool urgent) override;
  Result<std::string> FetchWithOrigin(const std::string& hash, bool urgent, ChunkOrigin* origin) override;
  ChunkCacheStats stats() const;

  void KeepOnlyWhenShared() { only_when_shared_ = true; }
  void AddConsumer() { consumers_++; }
  void RemoveConsumer() { consumers_--; }

  // One consumer for its lifetime (none when given nullptr): a batch of
  // volumes made together holds one while they are attached, so the first
  // one's fetches are kept for the rest (alone, it would be the only
  // consumer and its chunks would pass the cache by).
  class ConsumerHold {
   public:
    explicit ConsumerHold(ChunkCache* cache) : cache_(cache) {
      if (cache_) cache_->AddConsumer();
    }
    ~ConsumerHold() {
      if (cache_) cache_->RemoveConsumer();
    }
    ConsumerHold(const ConsumerHold&) = delete;
    ConsumerHold& operator=(const ConsumerHold&) = delete;

   private:
    ChunkCache* cache_;
  };

 private:
  bool Admit() const { return max_bytes_ > 0 && (!only_when_shared_ || consumers_.load() > 1); }
  using Fetched = std::shared_ptr<Result<std::string>>;  // shared by a flight's callers
  // The decoded bytes of a valid entry (a hit); a damaged one is dropped.
  std::optional<std::string> FromMemory(const std::string& hash);
  ChunkSource* source_;
  int level_;
  const uint64_t max_bytes_;  // 0: a pass-through (nothing kept)
  std::atomic<bool> only_when_shared_{false};
  std::atomic<int> consumers_{0};
  struct Compressed {
    std::string zstd;
    uint64_t length = 0;  // decoded
  };
  LruCache<Compressed> memory_;  // key = hash
  LruCache<std::string> hot_;    // key = hash: decoded copies of recent hits
  SingleFlight<std::string, Fetched> flights_;
  std::atomic<uint64_t> hits_{0}, misses_{0}, coalesced_{0}, source_bytes_{0}, passed_{0}, hot_hits_{0};
};

}  // namespace ferry::volume
