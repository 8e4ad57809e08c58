#pragma once
// One bit per chunk of a volume, persisted in a file and updated in place:
// the volume's "present" bitmap (`bitmap`) and its "written since
// creation" bitmap (`written`) are both one of these (volume.h says what
// each bit means and when it may be set).
//
// File: an 8-byte magic naming the kind ("FERRYBM1" present, "FERRYWR1"
// written), u64 little-endian chunk count, then one bit per chunk (bit i%8
// of byte i/8). Bits are only ever set, never cleared.
//
// Setting bits is a group commit: callers that arrive while a commit runs
// form the next group, whose leader runs the `before_write` hook once (the
// present bitmap syncs the data file there: data durable before its bit),
// writes the group's bitmap bytes, syncs the file once and only then shows
// the bits through the `show` hook. Only the leader writes the file, so no
// write of a byte can lose another's bit. Thread-safe.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ferry::volume {

struct BitmapHooks {
  // Run by a group's leader before it writes the group's bits; an error
  // fails the group (nothing of it is written or shown). Null: none.
  std::function<Status()> before_write;
  // Run by the leader with a group's chunks once their bits are durable.
  std::function<void(const std::vector<uint64_t>&)> show;
};

class BitmapFile {
 public:
  // Opens `path` (kCorruption when its magic or chunk count differ), or,
  // when it is missing or empty, creates it with bit i = initial(i),
  // durably. `*created` (optional) tells which.
  static Result<std::unique_ptr<BitmapFile>> Open(const std::string& path, std::string_view magic, uint64_t chunks,
                                                  const std::function<bool(uint64_t)>& initial, BitmapHooks hooks,
                                                  bool* created = nullptr);
  // Writes a new bitmap file whole at `path` (temp, fsync, rename): a
  // crash leaves the old file or the new one, never a part.
  static Status Create(const std::string& path, std::string_view magic, const std::vector<bool>& bits);
  ~BitmapFile();

  // The bits as they were on disk when opened.
  const std::vector<bool>& loaded() const { return loaded_; }
  // Makes the bits of `chunks` durable (one group commit for all of them);
  // returns once they are, or with the group's error.
  Status Set(const std::vector<uint64_t>& chunks);
  // Group commits written so far (each one write and one sync of this
  // file, after the before_write hook's).
  uint64_t commits() const { return commits_.load(std::memory_order_relaxed); }

 private:
  BitmapFile(int fd, std::string path, BitmapHooks hooks) : fd_(fd), path_(std::move(path)), hooks_(std::move(hooks)) {}
  // The leader's commit of one group: hook, bytes, sync, show.
  Status CommitGroup(const std::vector<uint64_t>& chunks);

  const int fd_;
  const std::string path_;
  const BitmapHooks hooks_;
  std::vector<bool> loaded_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<bool> durable_;              // guarded by mu_; written only by the leader
  std::vector<uint64_t> pending_;          // guarded by mu_: chunks of group open_
  uint64_t open_ = 1;                      // guarded by mu_: the group new chunks join
  uint64_t done_ = 0;                      // guarded by mu_: groups up to this one are done
  bool committing_ = false;                // guarded by mu_: a leader is committing a group
  Status error_;                           // guarded by mu_: the last failed group's error
  std::atomic<uint64_t> commits_{0};
};

}  // namespace ferry::volume
