#pragma once
// The threads volumes run their background work on (base/elastic_pool.h):
// installs of landed chunks (Volume::Land), and prefetch hints (readahead,
// read-around). Two pools, as a hint may wait for an install and never the
// other way round. Process-wide and never destroyed: a volume's destructor
// waits for its own tasks, and idle threads end by themselves. Each
// volume also bounds its own share (64 landings, 64 helpers).

#include <atomic>
#include <cstdint>

#include "base/elastic_pool.h"

namespace ferry::volume {

ElasticPool& InstallPool();
ElasticPool& HelperPool();

// Bytes of chunks landed and not yet installed, in every volume of the
// process. Past kLandedBudget a read installs its chunk before it is
// answered (Volume::LandingFull): a disk slower than the origin must not
// pile up chunks in memory, however many volumes share it.
std::atomic<uint64_t>& LandedBytes();
inline constexpr uint64_t kLandedBudget = 256ull << 20;

}  // namespace ferry::volume
