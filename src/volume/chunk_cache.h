#pragma once
// The transfer cache shared by every volume of a daemon: chunks by hash,
// kept zstd-compressed in memory (LRU by stored bytes), with concurrent
// fetches of one chunk sharing one fetch from the source behind it. A
// hundred clones of one image read each of its chunks from the object
// store once. Thread-safe.

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
};

class ChunkCache : public ChunkSource {
 public:
  ChunkCache(ChunkSource* source, uint64_t max_bytes, int level = 3);
  Result<std::string> Fetch(const std::string& hash, bool urgent) override;
  Result<std::string> FetchWithOrigin(const std::string& hash, bool urgent, ChunkOrigin* origin) override;
  ChunkCacheStats stats() const;

 private:
  using Fetched = std::shared_ptr<Result<std::string>>;  // shared by a flight's callers
  // The decoded bytes of a valid entry (a hit); a damaged one is dropped.
  std::optional<std::string> FromMemory(const std::string& hash);
  ChunkSource* source_;
  int level_;
  struct Compressed {
    std::string zstd;
    uint64_t length = 0;  // decoded
  };
  LruCache<Compressed> memory_;  // key = hash
  SingleFlight<std::string, Fetched> flights_;
  std::atomic<uint64_t> hits_{0}, misses_{0}, coalesced_{0}, source_bytes_{0};
};

}  // namespace ferry::volume
