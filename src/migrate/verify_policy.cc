#include "migrate/verify_policy.h"

#include "base/unix_time.h"

namespace ferry::migrate {

const char* ToString(VerifyBy b) {
  switch (b) {
    case VerifyBy::kSize: return "size";
    case VerifyBy::kMd5: return "md5";
    case VerifyBy::kChecksum: return "checksum";
    case VerifyBy::kSizeAndTime: return "size and time";
  }
  return "?";
}

const char* ToString(Difference::Kind k) {
  switch (k) {
    case Difference::Kind::kMissing: return "missing";
    case Difference::Kind::kDiffers: return "differs";
    case Difference::Kind::kExtra: return "extra";
  }
  return "?";
}

PairVerdict JudgePair(const VerifySide& src, const VerifySide& dst, bool checksummed) {
  PairVerdict v;
  if (src.size != dst.size) {
    v.same = false;
    v.by = VerifyBy::kSize;
    v.why = "size " + std::to_string(src.size) + " at the source, " + std::to_string(dst.size) +
            " at the destination";
    return v;
  }
  if (!src.md5.empty() && !dst.md5.empty()) {
    v.by = checksummed ? VerifyBy::kChecksum : VerifyBy::kMd5;
    v.same = src.md5 == dst.md5;
    if (!v.same) {
      v.why = std::string(checksummed ? "content" : "MD5") + " " + src.md5 + " at the source, " +
              dst.md5 + " at the destination";
    }
    return v;
  }
  v.by = VerifyBy::kSizeAndTime;
  // Last-Modified has whole seconds: compare the source's second.
  if (src.modified_ms > 0 && dst.modified_ms < src.modified_ms / 1000 * 1000) {
    v.same = false;
    v.why = "the destination (" + Rfc3339Utc(dst.modified_ms) + ") is older than the source (" +
            Rfc3339Utc(src.modified_ms) + ")";
  }
  return v;
}

}  // namespace ferry::migrate
