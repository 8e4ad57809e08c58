#include "cache/hot_set.h"

#include <atomic>

namespace ferry::cache {

uint64_t NextObjectId() {
  static std::atomic<uint64_t> next{1};
  return next++;
}

}  // namespace ferry::cache
