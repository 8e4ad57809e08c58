#pragma once
// Whole-range positional I/O on a file descriptor, with EINTR and short
// transfers handled: what the block devices (nbd::FileDevice, volumes) and
// the cache's spool files and the local object store all need. `what` names the operation in errors.

#include <cstdint>
#include <string_view>
#include <vector>

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

// A run of a file's bytes: a hole (no blocks; reads as zeros) or data.
struct FileRun {
  uint64_t length = 0;
  bool hole = false;
};
// [offset, offset + len) as runs of holes and data, in order, adjacent
// runs of one kind merged, lengths summing to len (past the file's end:
// a hole). Where the file system cannot tell (no SEEK_DATA) it is all
// data: a hole is a promise of zeros, data promises nothing.
Result<std::vector<FileRun>> FileRuns(int fd, uint64_t offset, uint64_t len);

}  // namespace ferry
