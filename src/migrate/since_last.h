#pragma once
// --since-last, the incremental sync of a cut-over: running a migration
// again copies only what is new or changed, and with --since-last keys the
// last completed job of the same scope already copied are skipped without a
// look at the destination. A key last modified before that job started
// (less a slack for clocks that disagree, 15 minutes by default) existed when it
// listed, so it was copied then (a completed job has no dead letters); a
// key written since has a later Last-Modified and is compared as usual.
//
// A multipart object (a "-N" ETag) is always compared: S3 gives it the time
// its upload began, which may precede the last job though it completed after.
//
// The trust this asks for: that nothing changed the destination behind the
// jobs' backs (`ferry migrate verify` checks that), and that Last-Modified
// is the time a source object was written, which object stores guarantee
// and local files do not (cp -p, rsync -t and tar keep old times), so a
// local source is refused.

#include <optional>
#include <string>

#include "base/status.h"
#include "migrate/job_spec.h"
#include "state/state_store.h"

namespace ferry::migrate {

// What a job copies (source, destination, profiles, filters, key range),
// as text: jobs with equal scopes copy the same keys.
std::string JobScope(const JobSpec& s);

// The newest completed job of `spec`'s scope, live or archived.
Result<std::optional<state::JobRecord>> LastCompletedLike(state::StateStore& store,
                                                          const JobSpec& spec);

}  // namespace ferry::migrate
