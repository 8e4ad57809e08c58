#pragma once
// What a migration job is asked to do: stored with the job (as JSON) so that
// `ferry migrate resume` runs it again exactly as it was created, whatever
// the command line of the resuming process says.

#include <cstdint>
#include <string>

#include "base/status.h"
#include "migrate/filter.h"

namespace ferry::migrate {

enum class Overwrite {
  kChanged,  // copy unless the destination has the same size and MD5 (default)
  kAlways,   // copy every object
  kNever,    // skip every key the destination already has
};
const char* ToString(Overwrite o);
Result<Overwrite> ParseOverwrite(const std::string& s);

struct JobSpec {
  std::string src, dst;                 // locations as typed
  std::string src_profile, dst_profile;  // AWS profiles ("" = default)
  int concurrency = 64;                 // objects in flight
  int part_concurrency = 4;             // parts in flight per large object
  int list_concurrency = 4;             // listings at once (1 = one flat listing)
  int list_chunk = 1000;                // keys asked for per list request (1..1000)
  FilterSpec filter;
  Overwrite overwrite = Overwrite::kChanged;
  uint64_t multipart_threshold = 64ull << 20;  // multipart at or above this size
  uint64_t part_size = 16ull << 20;            // raised so no object needs > 10,000 parts
  double bwlimit = 0;    // bytes/s read from the source, 0 = none
  double tps_limit = 0;  // requests/s to S3 endpoints, 0 = none
  int max_attempts = 10;  // failed attempts before an object is dead-lettered
  bool dry_run = false;
  bool server_side_copy = true;  // within one bucket, let the store copy
  // Parts of a job split by prefix (split.h): the split-off prefix, put in
  // front of each key before the filters see it (so filters mean what they
  // meant for the whole job), and whether this part takes only the keys
  // directly under its prefix (the part that keeps the top level).
  std::string filter_prefix;
  bool top_level_only = false;
  // A part of a job split into key ranges (split.h): only the source keys
  // in (range_after, range_upper] ("" = no bound) are its own.
  std::string range_after, range_upper;
  // List a store that can be listed by key ranges (S3) by the common
  // prefixes of a delimiter listing instead, as ferry did before ranges.
  // Kept for comparison only: a server whose delimiter listing forgets a
  // prefix loses its keys this way.
  bool list_by_prefixes = false;
  // Incremental sync (--since-last): a source key last modified before
  // since_ms is unchanged since the completed job since_job copied it, and
  // is counted as skipped without a look at the destination. 0 = off.
  bool since_last = false;  // asked for; CreateJob fills in the two below
  int64_t since_slack_ms = 15 * 60 * 1000;  // how far the clocks may disagree
  int64_t since_ms = 0;
  std::string since_job;
  // --delete: once the job completes without an error, remove destination
  // objects the source no longer has, at most max_delete of them (else
  // nothing is deleted and the count is reported).
  bool delete_extraneous = false;
  int64_t max_delete = 0;
  // Set at creation: the destination had no object under its prefix, so a
  // first attempt need not ask it whether a key is there.
  bool dst_empty_at_start = false;
  // Made for the worker pool (`--detach`): `ferry worker` runs it, and any
  // number of runners may work on it at once (runner.h).
  bool pool = false;
};

std::string SpecToJson(const JobSpec& spec);
// kCorruption when the stored text is not a job spec.
Result<JobSpec> SpecFromJson(const std::string& json);

}  // namespace ferry::migrate
