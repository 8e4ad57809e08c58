#pragma once
// A recorded NBD client session: what one client (a booting guest) asked of
// one export, as `ferry volume serve --trace-dir` writes it
// (traced_device.h) and the replay client (testing/nbd_replay) plays it
// back. Text, one request per line, in the order the requests ended:
//
//   # ferry-nbd-trace 1 size=BYTES
//   ISSUE_US DONE_US OP OFFSET LENGTH [fua]
//
// Times are microseconds since the session's first request; OP is R
// (read), W (write), F (flush), T (trim), Z (write zeroes) or C (cache).
// Lines that start with '#' and empty lines are comments. Block-status
// queries are not recorded (they move no data and a kernel client sends
// none).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ferry::nbd {

enum class TraceOp : char {
  kRead = 'R',
  kWrite = 'W',
  kFlush = 'F',
  kTrim = 'T',
  kZero = 'Z',
  kCache = 'C'
};

struct TraceRecord {
  uint64_t issue_us = 0, done_us = 0;
  TraceOp op = TraceOp::kRead;
  uint64_t offset = 0, length = 0;
  bool fua = false;
};

// The header line for an export of `size` bytes, with its newline.
std::string TraceHeader(uint64_t size);
// One record's line, with its newline.
std::string FormatTraceRecord(const TraceRecord& r);

struct Trace {
  uint64_t size = 0;                 // the export's, from the header (0: none given)
  std::vector<TraceRecord> records;  // by issue time (then done time)
};
// kInvalidArgument naming the first malformed line (1-based), a done time
// before its issue time, or an unknown op.
Result<Trace> ParseTrace(std::string_view text);

// How a replay sends record k (of a Trace's records, in order): after
// record k-1 was sent and record `after` answered (the latest reply the
// client had when it sent k: what it may have waited for; -1: none), and
// `think_us` after the later of those two moments. A faster server makes
// the replay faster, a slower one slower, as it would the real client;
// requests the client had in flight together are sent together. Two
// changes to one range that the recording had in flight together may land
// in either order in a replay (the protocol lets them): a replay checking
// its writes (testing/nbd_replay) counts on traces where each such pair is
// ordered by a reply, as a guest's file system orders them.
struct ReplayStep {
  int64_t after = -1;
  uint64_t think_us = 0;
};
std::vector<ReplayStep> PlanReplay(const std::vector<TraceRecord>& records);

}  // namespace ferry::nbd
