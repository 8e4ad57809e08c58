#include "volume/placement.h"

#include <algorithm>

namespace ferry::volume {

Result<std::vector<int>> PlaceVolumes(std::vector<PoolLoad> pools, uint64_t size, int count) {
  std::vector<int> out;
  for (int n = 0; n < count; ++n) {
    uint64_t max_free = 1, max_vol = 1, max_hyd = 1, max_wr = 1;
    for (const auto& p : pools) {
      max_free = std::max(max_free, p.free_bytes);
      max_vol = std::max(max_vol, p.volumes);
      max_hyd = std::max(max_hyd, p.hydration_bps);
      max_wr = std::max(max_wr, p.write_bps);
    }
    int best = -1;
    double best_score = 0;
    for (size_t i = 0; i < pools.size(); ++i) {
      const PoolLoad& p = pools[i];
      if (p.free_bytes < size) continue;
      double score = 0.4 * static_cast<double>(p.free_bytes) / static_cast<double>(max_free) -
                     0.3 * static_cast<double>(p.volumes) / static_cast<double>(max_vol) -
                     0.2 * static_cast<double>(p.hydration_bps) / static_cast<double>(max_hyd) -
                     0.1 * static_cast<double>(p.write_bps) / static_cast<double>(max_wr);
      if (best < 0 || score > best_score + 1e-12) {
        best = static_cast<int>(i);
        best_score = score;
      }
    }
    if (best < 0) {
      return Status::InvalidArgument("no pool has room for a volume of " + std::to_string(size) + " bytes (volume " +
                                     std::to_string(n + 1) + " of " + std::to_string(count) + ")");
    }
    out.push_back(best);
    pools[static_cast<size_t>(best)].free_bytes -= size;
    pools[static_cast<size_t>(best)].volumes += 1;
  }
  return out;
}

}  // namespace ferry::volume
