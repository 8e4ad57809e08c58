#pragma once
// Creating a migration job: validate everything a user can get wrong before
// anything is written (unknown source, destination inside the source, bad
// credentials, bad filters), then record the job and its first list shard.

#include <string>

#include "base/status.h"
#include "migrate/job_spec.h"
#include "state/state_store.h"
#include "store/open/open.h"

namespace ferry::migrate {

// Makes a fresh job id: "m" + 12 hex digits.
std::string NewJobId();

// Checks the job can run (both stores open, the source lists, the
// destination is not inside the source) and records it. On any error
// nothing is recorded and no destination directory is created.
Result<state::JobRecord> CreateJob(state::StateStore& store, JobSpec spec,
                                   const OpenOptions& open);

// The pure part of the overlap check, for tests: kInvalidArgument when the
// destination is the source, lies inside it, or contains it. Local paths must be absolute
// and normalised; S3 sides compare store identity and key prefixes.
Status CheckNotInside(bool s3, const std::string& src_store, const std::string& src_prefix,
                      const std::string& dst_store, const std::string& dst_prefix);

}  // namespace ferry::migrate
