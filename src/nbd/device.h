#pragma once
// What an NBD export serves: a block device of fixed size. The server
// checks bounds and flags before calling (protocol.h ValidateRequest), and
// calls from worker threads, several requests of a connection at once and
// several connections at once: implementations are thread-safe. A reply
// says nothing about requests still running (the protocol lets a client
// have many in flight; it orders what it needs ordered itself).
// Implementations: a file (file_device.h) and a lazy volume
// (volume/volume.h).

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ferry::nbd {

// A run of the device's bytes for NBD_CMD_BLOCK_STATUS (base:allocation).
struct Extent {
  uint64_t length = 0;
  bool zero = false;  // a hole that reads as zeros (HOLE|ZERO); else data
};

class BlockDevice {
 public:
  virtual ~BlockDevice() = default;
  virtual uint64_t size() const = 0;
  virtual bool read_only() const { return false; }
  // Fills `out` with `len` bytes from `offset`.
  virtual Status Read(uint64_t offset, uint64_t len, char* out) = 0;
  // `fua`: durable before returning.
  virtual Status Write(uint64_t offset, std::string_view data, bool fua) = 0;
  // Everything written before (every Write that returned) is durable.
  virtual Status Flush() = 0;
  // The range may read back as anything (zeros, here).
  virtual Status Trim(uint64_t offset, uint64_t len, bool fua) = 0;
  virtual Status WriteZeroes(uint64_t offset, uint64_t len, bool fua) = 0;

  // Whether an I/O on the range can run at once, without waiting for data
  // from elsewhere (a volume's missing chunk): the server runs such calls
  // on a pool of their own, so they never queue behind ones that wait. A
  // hint: a call may still wait.
  virtual bool Ready(uint64_t offset, uint64_t len) const {
    (void)offset, (void)len;
    return true;
  }
  // The range as extents, in order, lengths summing to `len`; must not
  // fetch or wait for anything. Default: all data.
  virtual Status Extents(uint64_t offset, uint64_t len, std::vector<Extent>* out) {
    (void)offset;
    out->assign(1, Extent{len, false});
    return Status::Ok();
  }
  // NBD_CMD_CACHE: bring the range close (a volume hydrates it ahead of
  // background hydration); returns when it is. Default: nothing to do.
  virtual Status Cache(uint64_t offset, uint64_t len) {
    (void)offset, (void)len;
    return Status::Ok();
  }
};

}  // namespace ferry::nbd
