#pragma once
// The decisions a migration makes about one object, as pure functions so
// they are table-tested: where a key goes, whether the destination must be
// asked first, whether to copy or skip, and what to do after a failure.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "engine/retry.h"
#include "migrate/job_spec.h"
#include "store/location.h"

namespace ferry::migrate {

// Source key -> destination key: the part after the source prefix, put
// after the destination prefix. Prefixes are "" or end with '/'.
struct KeyMap {
  std::string src_prefix;
  std::string dst_prefix;
  std::string_view Relative(std::string_view src_key) const;
  std::string DstKey(std::string_view src_key) const;
};

// A location's key part as a prefix: "" stays "", "a" and "a/" become "a/".
std::string AsPrefix(std::string_view key);

// The key map of a job between two locations (a local directory's keys are
// relative to it, so its prefix is "").
KeyMap KeyMapFor(const Location& src, const Location& dst);

// What the destination holds under a key (from a HEAD).
struct DstObject {
  uint64_t size = 0;
  std::string md5;  // lower-case hex; "" when unknown (multipart ETag, SSE...)
  int64_t last_modified_ms = 0;
};

// Whether the destination must be asked about the key before copying: never
// when nothing can be there (it was empty at the start and this is the
// object's first claim) and the answer could not change the decision.
bool NeedDestinationCheck(Overwrite mode, bool dst_empty_at_start, int claims);

enum class Decision { kCopy, kSkip };
struct OverwriteVerdict {
  Decision decision = Decision::kCopy;
  const char* reason = "";  // why a skip ("unchanged", "exists", "copied by this job")
};
// `src_md5` is "" when the source's MD5 is unknown. Under kChanged, when
// either MD5 is unknown (a multipart ETag), an object of the same size whose
// destination copy is not older than the source (to the second) is taken as
// unchanged (rclone's size + modification-time fallback).
//
// The last guard of exactly-once accounting: when the key was claimed before
// in this job (`claimed_before`: a retry, or a runner that died), a
// destination object written after the job first ran (`job_started_ms`) was
// written by this job — a copy whose completion was not yet recorded — so it
// is skipped whatever the mode, when it is whole (the source's size, and its
// MD5 where both are known); anything else there is what a PUT cut short
// left (s3rver keeps those), and is copied over. Last-Modified has whole
// seconds, so the
// comparison uses the start's second; a first claim never takes this path,
// so an earlier job's copy made in that same second is not mistaken for one.
OverwriteVerdict DecideOverwrite(Overwrite mode, uint64_t src_size, std::string_view src_md5,
                                 int64_t src_modified_ms, const std::optional<DstObject>& dst,
                                 bool claimed_before, int64_t job_started_ms);

// What follows a failed attempt.
enum class FailureAction {
  kRetry,       // counted attempt; claimable again after delay_ms
  kRelease,     // not counted (outage, cancellation); claimable after delay_ms
  kDeadLetter,  // permanent, or attempts exhausted
};
struct FailurePlan {
  FailureAction action = FailureAction::kRetry;
  std::string reason;  // for the dead-letter queue
  int64_t delay_ms = 0;
};
// `attempts` counts failed attempts before this one. `outage` is true while
// the circuit of the failing dependency is open: the failure is the
// dependency's, not the object's, so it does not count; nor does a throttle
// (503 SlowDown, 429), which the endpoint's pacer answers.
FailurePlan PlanFailure(const Status& s, int attempts, int max_attempts, bool outage,
                        const RetryPolicy& backoff, double random01);

}  // namespace ferry::migrate
