#pragma once
// Where a batch of new volumes goes: each volume in turn to the pool with
// the best score among those with room for it (free capacity at least the
// volume's size). The score prefers, in this weight, more free capacity,
// fewer volumes, less hydration bandwidth in use and less write bandwidth
// in use, each relative to the best pool, and counts the volumes already
// placed by this batch, so a batch spreads instead of piling onto the pool
// that was best before it started. Pure; ties go to the lower pool index.

#include <cstdint>
#include <vector>

#include "base/status.h"

namespace ferry::volume {

struct PoolLoad {
  uint64_t free_bytes = 0;
  uint64_t volumes = 0;
  uint64_t hydration_bps = 0;  // bytes/s being hydrated now
  uint64_t write_bps = 0;      // bytes/s clients write now
};

// The pool index for each of `count` volumes of `size` bytes; kNoSpace
// (kInvalidArgument) when some volume fits nowhere.
Result<std::vector<int>> PlaceVolumes(std::vector<PoolLoad> pools, uint64_t size, int count);

}  // namespace ferry::volume
