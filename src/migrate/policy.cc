#include "migrate/policy.h"

#include <algorithm>

namespace ferry::migrate {

std::string_view KeyMap::Relative(std::string_view src_key) const {
  if (src_key.substr(0, src_prefix.size()) == src_prefix) src_key.remove_prefix(src_prefix.size());
  return src_key;
}

std::string KeyMap::DstKey(std::string_view src_key) const {
  return dst_prefix + std::string(Relative(src_key));
}

std::string AsPrefix(std::string_view key) {
  if (key.empty() || key.back() == '/') return std::string(key);
  return std::string(key) + "/";
}

KeyMap KeyMapFor(const Location& src, const Location& dst) {
  return KeyMap{src.is_remote() ? AsPrefix(src.key) : "", dst.is_remote() ? AsPrefix(dst.key) : ""};
}

bool NeedDestinationCheck(Overwrite mode, bool dst_empty_at_start, int claims) {
  if (claims > 1) return true;  // a retry or a resumed job: it may be there already
  if (dst_empty_at_start) return false;
  return mode != Overwrite::kAlways;
}

OverwriteVerdict DecideOverwrite(Overwrite mode, uint64_t src_size, std::string_view src_md5,
                                 int64_t src_modified_ms, const std::optional<DstObject>& dst,
                                 bool claimed_before, int64_t job_started_ms) {
  if (!dst) return {Decision::kCopy, ""};
  int64_t start_second_ms = job_started_ms / 1000 * 1000;
  if (claimed_before && job_started_ms > 0 && dst->last_modified_ms >= start_second_ms) {
    // Only a whole copy: a server that keeps the bytes of a PUT cut short
    // (s3rver 3.7 stores what arrived before the connection dropped) holds
    // something else, which must be copied over whatever the mode.
    const bool whole = dst->size == src_size &&
                       (src_md5.empty() || dst->md5.empty() || dst->md5 == src_md5);
    return whole ? OverwriteVerdict{Decision::kSkip, "copied by this job"}
                 : OverwriteVerdict{Decision::kCopy, ""};
  }
  switch (mode) {
    case Overwrite::kAlways:
      return {Decision::kCopy, ""};
    case Overwrite::kNever:
      return {Decision::kSkip, "exists"};
    case Overwrite::kChanged:
      if (dst->size != src_size) return {Decision::kCopy, ""};
      if (!src_md5.empty() && !dst->md5.empty()) {
        return dst->md5 == src_md5 ? OverwriteVerdict{Decision::kSkip, "unchanged"}
                                   : OverwriteVerdict{Decision::kCopy, ""};
      }
      // Whole seconds, as Last-Modified gives them (rclone's modify window).
      if (src_modified_ms > 0 && dst->last_modified_ms >= src_modified_ms / 1000 * 1000) {
        return {Decision::kSkip, "unchanged (size and time)"};
      }
      return {Decision::kCopy, ""};
  }
  return {Decision::kCopy, ""};
}

namespace {

// Dead-letter reasons for errors no retry can fix; "" for retryable ones.
std::string PermanentReason(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kAccessDenied: return "access denied";
    case ErrorCode::kNotFound: return "deleted from source after listing";
    case ErrorCode::kInvalidArgument: return "rejected as invalid";
    case ErrorCode::kAlreadyExists: return "conflicts at destination";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kIoError: return "local i/o error";
    case ErrorCode::kProtocol: return s.retryable() ? "" : "protocol error";
    default: break;
  }
  return s.retryable() ? "" : "permanent error";
}

}  // namespace

FailurePlan PlanFailure(const Status& s, int attempts, int max_attempts, bool outage,
                        const RetryPolicy& backoff, double random01) {
  FailurePlan p;
  if (s.code() == ErrorCode::kCancelled) {
    p.action = FailureAction::kRelease;
    return p;
  }
  // A source object that changed while it was copied is retried (the next
  // attempt reads the new version); other permanent errors are final.
  bool retryable = s.retryable() || s.code() == ErrorCode::kPreconditionFailed ||
                   s.code() == ErrorCode::kCorruption;
  if (!retryable) {
    p.action = FailureAction::kDeadLetter;
    p.reason = PermanentReason(s);
    return p;
  }
  int next = attempts + 1;
  p.delay_ms = BackoffDelay(backoff, s, next, random01).count();
  // Throttling is the endpoint's load, not the object's fault: the pacer
  // slows down, and the object waits without using up its attempts.
  if (outage || s.code() == ErrorCode::kThrottled) {
    p.action = FailureAction::kRelease;
    return p;
  }
  if (next >= max_attempts) {
    p.action = FailureAction::kDeadLetter;
    p.reason = "retries exhausted";
    return p;
  }
  p.action = FailureAction::kRetry;
  return p;
}

}  // namespace ferry::migrate
