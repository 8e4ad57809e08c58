#pragma once
// Many guests replaying one recorded NBD session (nbd/trace.h) at once,
// each on its own TCP connection, as a kernel client would be: handshake
// with NBD_OPT_GO (no structured replies), then the trace's requests with
// its waits and think times (nbd::PlanReplay), several in flight when the
// recording had them. Guests run on a few threads, each thread an event
// loop of its own; nothing blocks per guest. Asio stays in replay.cc.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "nbd/trace.h"

namespace ferry::replay {

struct GuestSpec {
  uint64_t id = 0;   // names its writes (write_pattern.h)
  std::string host;  // loopback address
  uint16_t port = 0;
  std::string export_name;
  std::chrono::milliseconds start{0};  // after the replay starts
};

struct ReplayOptions {
  const nbd::Trace* trace = nullptr;
  std::vector<GuestSpec> guests;
  int threads = 1;
  double time_scale = 1.0;  // think times times this (0: none)
  // When set, every read is compared with these bytes (the image the
  // snapshot was made from) where the guest has not written.
  std::string_view image;
  // A guest that has not finished this long after its start gives up.
  std::chrono::seconds timeout{600};
  // Counts every change (write, trim, write-zeroes) answered with success,
  // as it is, across all guests (for a watcher; may be null).
  std::atomic<uint64_t>* acked_changes = nullptr;
};

// A change's fate (a write, trim or write-zeroes), for the write log.
// Sequence numbers count a guest's changes in the order it sent them.
struct WriteNote {
  char op = 'W';  // W, T or Z
  uint64_t seq = 0, offset = 0, length = 0;
  bool acked = false;  // answered with success; else sent and unanswered
};

struct GuestResult {
  bool ok = false;
  std::string error;      // why not
  double connect_ms = 0;  // connected and through the handshake
  double boot_ms = 0;     // first request sent -> last reply
  uint64_t requests = 0, read_bytes = 0, written_bytes = 0;
  uint64_t read_mismatches = 0;  // reads that differed from the image
  uint64_t reads_checked = 0;
  std::vector<float> read_ms;  // each read's latency
  std::vector<WriteNote> writes;
};

// Runs every guest to its end; results[i] is guests[i]'s.
std::vector<GuestResult> RunReplay(const ReplayOptions& options);

}  // namespace ferry::replay
