#pragma once
// What an NBD export serves: a block device of fixed size. The server
// checks bounds and flags before calling (protocol.h ValidateRequest), and
// calls from worker threads, one request of a connection at a time (but
// several connections at once: implementations are thread-safe).
// Implementations: a file (file_device.h); later a volume that hydrates
// from a snapshot.

#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace ferry::nbd {

class BlockDevice {
 public:
  virtual ~BlockDevice() = default;
  virtual uint64_t size() const = 0;
  virtual bool read_only() const { return false; }
  // Fills `out` with `len` bytes from `offset`.
  virtual Status Read(uint64_t offset, uint64_t len, char* out) = 0;
  // `fua`: durable before returning.
  virtual Status Write(uint64_t offset, std::string_view data, bool fua) = 0;
  // Everything written before is durable.
  virtual Status Flush() = 0;
  // The range may read back as anything (zeros, here).
  virtual Status Trim(uint64_t offset, uint64_t len, bool fua) = 0;
  virtual Status WriteZeroes(uint64_t offset, uint64_t len, bool fua) = 0;
};

}  // namespace ferry::nbd
