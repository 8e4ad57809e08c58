#pragma once
// Whole-range positional I/O on a file descriptor, with EINTR and short
// transfers handled: what the block devices (nbd::FileDevice, volumes) and
// the cache's spool files and the local object store all need. `what` names the operation in errors.

#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace ferry {

// Writes all of `data` at `offset`.
Status PwriteFull(int fd, std::string_view data, uint64_t offset, std::string_view what);
// Reads up to `len` bytes at `offset` into `out`, stopping only at the
// file's end: the bytes read.
Result<uint64_t> PreadUpTo(int fd, char* out, uint64_t len, uint64_t offset,
                           std::string_view what);
// Reads `len` bytes at `offset` into `out`; bytes past the file's end read
// as zeros.
Status PreadOrZeros(int fd, char* out, uint64_t len, uint64_t offset, std::string_view what);
// Makes [offset, offset + len) read as zeros: a punched hole where the file
// system can, else written zeros.
Status ZeroRange(int fd, uint64_t offset, uint64_t len, std::string_view what);
// fdatasync.
Status DataSync(int fd);

}  // namespace ferry
