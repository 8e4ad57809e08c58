#pragma once
// Where a volume's missing chunks come from, by content hash. Every chunk
// returned has been checked against its hash. Implementations: a snapshot
// repository (RepositorySource) and the daemon-wide transfer cache in front
// of it (chunk_cache.h), so clones of one image fetch each chunk once.

#include <cstdint>
#include <string>

#include "base/status.h"

namespace ferry::volume {

class ChunkSource {
 public:
  virtual ~ChunkSource() = default;
  // The bytes of chunk `hash` (SHA-256 hex). `urgent`: a client waits.
  virtual Result<std::string> Fetch(const std::string& hash, bool urgent) = 0;
};

}  // namespace ferry::volume
