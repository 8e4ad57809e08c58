#pragma once
// Splitting one migration into parallel jobs by prefix: one job per common
// prefix directly under the source (".../a/", ".../b/"...), plus one job for
// the objects directly under the source itself. Each part is an ordinary job
// (resumable, with its own counters and dead-letter queue) and they can run
// at once against one state store; together they cover exactly the keys
// the whole job would have, with the same filters.

#include <vector>

#include "base/status.h"
#include "migrate/job_spec.h"
#include "store/open.h"

namespace ferry::migrate {

// Lists the source's top level and returns the parts' specs: the top-level
// part first, then one per common prefix in key order.
Result<std::vector<JobSpec>> SplitByPrefix(const JobSpec& whole, const OpenOptions& open);

}  // namespace ferry::migrate
