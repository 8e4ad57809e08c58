#pragma once
// The threads volumes run their background work on (base/elastic_pool.h):
// installs of landed chunks (Volume::Land), and prefetch hints (readahead,
// read-around). Two pools, as a hint may wait for an install and never the
// other way round. Process-wide and never destroyed: a volume's destructor
// waits for its own tasks, and idle threads end by themselves. Each
// volume also bounds its own share (64 landings, 64 helpers).

#include "base/elastic_pool.h"

namespace ferry::volume {

ElasticPool& InstallPool();
ElasticPool& HelperPool();

}  // namespace ferry::volume
