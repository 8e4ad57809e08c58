#pragma once
// How `ferry migrate verify` judges a key both sides hold, as pure functions
// (table-tested in verify_policy_test.cc), and the differences it reports.
//
// The evidence, strongest first: the MD5 of both bodies (a single-part
// ETag, ferry's or rclone's MD5 metadata, or --checksum reading both), else
// size and time (rclone's fallback: the same size, and a destination not
// older than the source to the second, since a copy is written after its
// source). A size that differs always differs.

#include <cstdint>
#include <string>

namespace ferry::migrate {

struct VerifySide {
  uint64_t size = 0;
  std::string md5;          // lower-case hex, "" when unknown
  int64_t modified_ms = 0;  // 0 when unknown
};

enum class VerifyBy { kSize, kMd5, kChecksum, kSizeAndTime };
const char* ToString(VerifyBy b);  // "size", "md5", "checksum", "size and time"

struct PairVerdict {
  bool same = true;
  VerifyBy by = VerifyBy::kSizeAndTime;
  std::string why;  // when !same: one line, for the report
};

// `checksummed`: the MD5s were computed by reading both bodies.
PairVerdict JudgePair(const VerifySide& src, const VerifySide& dst, bool checksummed);

struct Difference {
  enum class Kind { kMissing, kDiffers, kExtra };
  Kind kind = Kind::kMissing;
  std::string key;  // relative to the compared prefixes
  uint64_t src_size = 0, dst_size = 0;  // of the sides that hold it
  std::string why;  // kDiffers: JudgePair's reason
  std::string src_etag;          // the source's listed ETag (to requeue it)
  int64_t src_modified_ms = 0;   // and its time
};
// "missing" (at the destination), "differs", "extra" (only at the destination).
const char* ToString(Difference::Kind k);

}  // namespace ferry::migrate
