#pragma once
// --delete: once a job has completed without an error, the destination
// objects its source no longer has are removed, as `rclone sync` does, with
// the guards a cut-over needs:
//  - only after a listing of both sides that finished without any error
//    (verify.h, keys only): an error anywhere, and nothing is deleted;
//  - never more than `max_delete` objects: when more would go (a source
//    listed empty by mistake, a wrong prefix), nothing is deleted and the
//    count is reported (max_delete 0, the default, only reports);
//  - keys the job's filters leave out are never deleted;
//  - keys a client wrote through a gateway (ferry gateway) are never
//    deleted: the source never had them.
// The keys to delete wait in an on-disk sort, so memory stays bounded.

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "migrate/verify.h"

namespace ferry::migrate {

struct PruneResult {
  int64_t extra = 0;    // destination keys the source does not have (but `kept`)
  int64_t deleted = 0;
  int64_t kept = 0;      // of those, written by clients through a gateway
  bool refused = false;  // more than max_delete: nothing deleted
};

// Of these keys (as the source would name them: src_prefix + key), the ones
// a client wrote through a gateway, which stay. Called with up to 1,000
// keys at a time.
using KeptByClients =
    std::function<Result<std::set<std::string>>(const std::vector<std::string>& src_keys)>;

// `o` says what to compare (src, dst, prefixes, filters); its keys_only
// and on_difference are set here. `kept` may be empty (no gateway). Deletes
// up to `concurrency` at once. Errors (a listing failed; a delete failed,
// after those before it succeeded) are returned.
Result<PruneResult> PruneDestination(VerifyOptions o, int64_t max_delete, int concurrency,
                                     const KeptByClients& kept,
                                     const std::function<void(const std::string&)>& on_deleted);

}  // namespace ferry::migrate
