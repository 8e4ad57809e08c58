#pragma once
// Sorting more records than memory should hold (an external merge sort), for
// verify's listings of servers that do not list in byte order, and its
// differences. Records are kept in memory up to a budget, then sorted and
// written to a run file; Next() merges the runs and what is left in memory
// into one stream in key order (byte order; equal keys in the order added).
//
// Run files are created in `dir` and unlinked at once, so nothing is left
// behind whatever happens to the process; each run costs one open file and
// a 64 KiB read buffer while merging. A run file is a sequence of records:
// key length (u32), key, payload length (u32), payload, in host byte order
// (the file never outlives the process that wrote it).
//
// Not thread-safe: one owner adds, then reads.

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace ferry::migrate {

struct SpillRecord {
  std::string key;
  std::string payload;
};

class SpillSorter {
 public:
  // `dir`: where run files go ("" = $TMPDIR or /tmp). `max_in_memory`:
  // records held before a run is written.
  explicit SpillSorter(std::string dir = "", size_t max_in_memory = 200'000);
  ~SpillSorter();
  SpillSorter(const SpillSorter&) = delete;
  SpillSorter& operator=(const SpillSorter&) = delete;

  Status Add(SpillRecord r);
  // Ends adding; reading starts. The records in key order, one by one;
  // nullopt at the end.
  Result<std::optional<SpillRecord>> Next();

  uint64_t count() const { return count_; }
  size_t runs() const { return runs_.size(); }

 private:
  struct Run;
  Status WriteRun();
  Status StartMerge();
  // Reads the next record of a run into its head (empty at the end).
  static Status Advance(Run& r);

  std::string dir_;
  size_t max_in_memory_;
  uint64_t count_ = 0;
  uint64_t seq_ = 0;                        // insertion order, for stable merging
  std::vector<std::pair<uint64_t, SpillRecord>> memory_;
  std::vector<std::unique_ptr<Run>> runs_;
  bool merging_ = false;
  size_t memory_at_ = 0;                    // next record of memory_ while merging
};

}  // namespace ferry::migrate
