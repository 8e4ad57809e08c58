#pragma once
// The volume daemon's metrics (GET /metrics on its API), in Prometheus's
// text format: per volume, per pool and for the transfer caches. Rendering
// is a pure function of a snapshot the daemon takes.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "volume/chunk_cache.h"
#include "volume/volume.h"

namespace ferry::volume {

struct DaemonMetrics {
  std::vector<std::pair<std::string, VolumeStats>> volumes;  // by name
  struct Pool {
    std::string dir;
    uint64_t hydration_bps = 0, write_bps = 0;
  };
  std::vector<Pool> pools;
  uint64_t hydration_backoffs = 0;
  ChunkCacheStats cache;  // summed over the repositories' transfer caches
  LatencyHistogram::Snapshot trigger_waits;  // client waits for missing chunks
};

std::string RenderMetrics(const DaemonMetrics& m);

}  // namespace ferry::volume
