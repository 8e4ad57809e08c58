#include "ops/part_plan.h"

#include <algorithm>

namespace ferry {

PartPlan PlanParts(uint64_t size, const PartPolicy& p) {
  PartPlan plan;
  if (size < p.threshold || size == 0) {
    plan.part_size = size;
    return plan;
  }
  constexpr uint64_t kMiB = 1ull << 20;
  uint64_t part = std::clamp(p.part_size, p.min_part_size, p.max_part_size);
  uint64_t max_parts = static_cast<uint64_t>(p.max_parts);
  if ((size + part - 1) / part > max_parts) {
    uint64_t need = (size + max_parts - 1) / max_parts;
    part = (need + kMiB - 1) / kMiB * kMiB;
  }
  plan.multipart = true;
  plan.part_size = part;
  plan.parts = static_cast<int>((size + part - 1) / part);
  return plan;
}

}  // namespace ferry
