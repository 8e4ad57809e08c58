#pragma once
// Orders that learn (`ferry volume serve --learn-orders`): the daemon
// watches each clone it creates, takes the order in which its clients
// first touched its chunks once that trace has settled, and merges it into
// the clone's snapshot's prefetch order (snapshot/learned_order.h: bounded,
// in the order of first need), so that later clones, on any daemon,
// prefetch what boots really read. A wrong or stale order costs bytes
// only: demand reads go first at the fetch gate (fetch_gate.h).
//
// - A trace is final once the clone touched no new chunk for `settle`
//   (a boot's reads have ended), or `window` after its first touch
//   (a client that keeps reading new chunks: its boot is long over).
// - Each clone is merged once. Clones the daemon re-opens at start are not
//   watched (their first touches since are not a boot's), nor those
//   removed before their trace settled.
// - Traces that settle together are merged into their snapshot in one
//   read-modify-write of its manifest. Daemons do not lock each other out:
//   two merging into one snapshot at once may lose one of the two traces
//   (the order is a hint; the next clone teaches it again). A snapshot
//   stops learning after snapshot::kMaxLearnedClones clones.
//
// Thread-safe.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "snapshot/manifest.h"

namespace ferry::volume {

class Volume;

struct LearnSettings {
  std::chrono::milliseconds settle{10'000};
  std::chrono::milliseconds window{120'000};
  uint64_t max_bytes = 256ull << 20;  // the order's bound, and a trace's
};

// Whether a clone's trace is final (above), given how long ago it first
// touched a chunk and last touched a new one. Pure.
bool TraceSettled(std::chrono::milliseconds since_first, std::chrono::milliseconds since_last_new,
                  const LearnSettings& s);

class OrderLearner {
 public:
  // Reads snapshot `from` ("REPOSITORY/NAME")'s manifest, lets `change`
  // change it, and writes it back when `change` returns true.
  using UpdateManifest = std::function<Status(
      const std::string& from, const std::function<bool(snapshot::Manifest*)>& change)>;
  // How many chunks a clone touched first, in order (Volume::FirstTouches).
  using Touches = std::function<std::vector<uint32_t>()>;

  OrderLearner(LearnSettings s, UpdateManifest update) : s_(s), update_(std::move(update)) {}
  void Watch(const std::string& name, const std::string& from, Touches touches);
  void Forget(const std::string& name);
  // Merges the traces that have settled by `now`; call about once a second.
  void Poll(std::chrono::steady_clock::time_point now);
  uint64_t merged() const;  // clones' traces merged into their snapshot
  size_t watching() const;

 private:
  struct Watched {
    std::string from;
    Touches touches;
    size_t count = 0;  // first touches when last polled
    std::chrono::steady_clock::time_point first{}, last_new{};
  };
  const LearnSettings s_;
  const UpdateManifest update_;
  mutable std::mutex mu_;
  std::map<std::string, Watched> watched_;  // guarded by mu_
  uint64_t merged_ = 0;                     // guarded by mu_
};

}  // namespace ferry::volume
