#pragma once
// Splitting one migration into parallel jobs. Each part is an ordinary job
// (resumable, with its own counters and dead-letter queue); they can run at
// once against one state store, and together they cover exactly the keys the
// whole job would have, with the same filters.
//
// A source listed by key ranges (S3) is cut into key ranges
// (range_after, range_upper] at the common prefixes directly under it, one
// part per prefix: parts tile the key space, so a prefix the server's
// delimiter listing forgot merely merges into a neighbouring part. A local
// directory is cut by its walk: one job per subdirectory, plus one for the
// files directly in it.

#include <string>
#include <vector>

#include "base/status.h"
#include "migrate/job_spec.h"
#include "store/open/open.h"

namespace ferry::migrate {

// Lists the source's top level and returns the parts' specs in key order.
Result<std::vector<JobSpec>> SplitByPrefix(const JobSpec& whole, const OpenOptions& open);

// How a part is named in output: its source, and its key range if any.
std::string DescribePart(const JobSpec& part);

}  // namespace ferry::migrate
