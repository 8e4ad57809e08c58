#pragma once
// Named crash points for crash-recovery tests (rocksdb's fault injection,
// reduced to the one fault that matters for durability: dying at a chosen
// step). FERRY_CRASH_AT="name:N" makes the process kill itself with SIGKILL
// the Nth time it passes CrashPoint("name"); unset, a CrashPoint costs one
// relaxed atomic load. Tests use it to stop a migration mid-listing,
// mid-batch or mid-multipart and then prove that resume finishes exactly.
//
// Points in use: "list-page" (after a list page is committed), "finish"
// (after a batch of finished objects is committed), "multipart-created"
// (after a multipart upload is created, before its id is recorded), "part"
// (after a multipart part is recorded), "transfer" (after an object is written but
// before it is recorded), "atomic-write" and "atomic-renamed" (around the
// rename of base/atomic_file.h), "segment-append" (halfway through writing
// a cache record, cache/segment.h), "gateway-copied" (after an on-demand
// copy is written to the destination, before it is marked in the job).

#include <string_view>

namespace ferry {

void CrashPoint(std::string_view name);

}  // namespace ferry
