#include "volume/helper_pools.h"

namespace ferry::volume {

namespace {
// A thousand clones booting at once keep a few hundred of each busy (each
// blocks on a sync or a fetch); idle ones end after ten seconds.
constexpr size_t kMaxThreads = 512;
constexpr std::chrono::seconds kIdle{10};
}  // namespace

ElasticPool& InstallPool() {
  static ElasticPool* pool =
      new ElasticPool(kMaxThreads, kIdle);  // never destroyed (see the header)
  return *pool;
}

ElasticPool& HelperPool() {
  static ElasticPool* pool = new ElasticPool(kMaxThreads, kIdle);
  return *pool;
}

std::atomic<uint64_t>& LandedBytes() {
  static std::atomic<uint64_t> bytes{0};
  return bytes;
}

}  // namespace ferry::volume
