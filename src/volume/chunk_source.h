#pragma once
// Where a volume's missing chunks come from, by content hash. Every chunk
// returned has been checked against its hash. Implementations: a snapshot
// repository (RepositorySource) and the daemon-wide transfer cache in front
// of it (chunk_cache.h), so clones of one image fetch each chunk once.

#include <cstdint>
#include <string>

#include "base/status.h"

namespace ferry::volume {

// Where a fetched chunk's bytes came from, for a volume's accounting.
enum class ChunkOrigin {
  kSource,  // this fetch went to the source (object store or cache tier)
  kCache,   // a cache in front of it had them, or another caller's fetch brought them
};

class ChunkSource {
 public:
  virtual ~ChunkSource() = default;
  // The bytes of chunk `hash` (SHA-256 hex). `urgent`: a client waits.
  virtual Result<std::string> Fetch(const std::string& hash, bool urgent) = 0;
  // The same, saying where the bytes came from (a source with no cache of
  // its own: always kSource).
  virtual Result<std::string> FetchWithOrigin(const std::string& hash, bool urgent, ChunkOrigin* origin) {
    *origin = ChunkOrigin::kSource;
    return Fetch(hash, urgent);
  }
};

}  // namespace ferry::volume
