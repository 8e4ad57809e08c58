#pragma once
// How an object of a given size is cut into parts: a pure function, so the
// rules are table-tested. Parts are of equal size but the last (R2 requires
// it; S3 accepts it), no smaller than the store's minimum, and the part size
// is raised in whole MiB until no more than max_parts are needed.

#include <cstdint>

namespace ferry {

struct PartPlan {
  bool multipart = false;  // false: one PUT / one GET
  uint64_t part_size = 0;  // every part but the last
  int parts = 1;
};

struct PartPolicy {
  uint64_t threshold = 64ull << 20;   // multipart at or above this size
  uint64_t part_size = 16ull << 20;   // preferred part size
  uint64_t min_part_size = 5ull << 20;
  uint64_t max_part_size = 5ull << 30;
  int max_parts = 10000;
};

PartPlan PlanParts(uint64_t size, const PartPolicy& policy);

}  // namespace ferry
