#pragma once
// `ferry migrate verify`: an independent check that a destination holds
// what a source holds (rclone check). Both sides are listed flat, their
// keys (relative to the compared prefixes) merged in order as the listings
// stream, and each key both hold is judged (verify_policy.h).
//
// How it lists: key ranges (key_range.h) of the relative key space, up to
// `concurrency` at once, each listed on both sides with start-after and
// merged as the two streams go, so memory holds about a page per side per
// range whatever the bucket's size. Ranges start at the source's top-level
// prefixes; a thread with nothing left to do splits the busiest range
// (range_split.h). When a side cannot list by ranges
// (StoreFeatures::range_listing) or breaks a listing promise on the way
// (start-after ignored, keys out of byte order), verify lists each side
// whole, sorts it on disk (spill_sort.h) and merges the sorted streams:
// slower, as bounded in memory, and never fooled by the order.
//
// Differences are reported in key order once the comparison is complete.

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"
#include "migrate/filter.h"
#include "migrate/verify_policy.h"
#include "store/object_store.h"

namespace ferry::migrate {

struct VerifyOptions {
  ObjectStore* src = nullptr;
  ObjectStore* dst = nullptr;
  std::string src_prefix, dst_prefix;  // keys are compared relative to these ("" or ending in '/')
  // A job's filters (verify --job): a source key they leave out is not
  // expected at the destination, and a destination key whose path they
  // leave out is not reported as extra.
  FilterSpec filter;
  std::string filter_prefix;  // put before each relative key for the filters
  // A job's key range (a --split part's): only source keys in (after,
  // upper] are compared ("" upper: no bound), on both sides.
  std::string range_after, range_upper;
  bool checksum = false;  // read and hash both bodies where no MD5 is known
  bool keys_only = false;  // compare key sets only: a key both sides hold matches
  int concurrency = 16;   // ranges listed and compared at once
  int list_chunk = 1000;  // keys per list request
  std::string spill_dir;  // for on-disk sorting ("" = $TMPDIR or /tmp)
  size_t spill_records = 200'000;  // records a sort holds in memory before writing a run
  bool force_spill = false;        // list whole and sort (tests)
  // Each difference, in key order, from the calling thread, after the
  // comparison ends. May be empty.
  std::function<void(const Difference&)> on_difference;
  // Something the user should know (a fallback to sorting on disk).
  std::function<void(const std::string&)> on_warning;
  const std::atomic<bool>* stop = nullptr;  // stops early (the result is then an error)
};

struct VerifyCounts {
  int64_t matched = 0;
  int64_t missing = 0;    // at the source, not at the destination
  int64_t differing = 0;
  int64_t extra = 0;      // only at the destination
  int64_t by_md5 = 0, by_checksum = 0, by_size_time = 0;  // how pairs with equal sizes were judged
  int64_t lookups = 0;     // HEADs made to find an MD5 (multipart objects, local files)
  int64_t bytes_hashed = 0;  // read by --checksum
  bool sorted_on_disk = false;
  double seconds = 0;
  // Nothing missing and nothing different (extras do not count).
  bool ok() const { return missing == 0 && differing == 0; }
};

// Runs the comparison. Errors (a listing or read that failed after its
// retries, an unwritable spill directory, a stop) are returned: the counts
// of an incomplete comparison are never reported as a result.
Result<VerifyCounts> RunVerify(const VerifyOptions& o);

}  // namespace ferry::migrate
