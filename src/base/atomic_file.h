#pragma once
// The one way ferry writes a small state file whole (volume.json, a
// multipart manifest, a cache entry, a port file): write to a temporary
// name in the target's directory, fsync it, rename it over the target,
// fsync the directory. A crash at any step leaves either the old file or
// the new one, never a mix or a torn write; at worst a ".%tmp.*" file,
// which readers ignore (the name is reserved in every directory ferry
// owns).
//
// Crash points (base/crash_point.h): "atomic-write" after the temporary
// file is synced and before the rename, "atomic-renamed" after the rename
// and before the directory sync.

#include <string>
#include <string_view>

#include "base/status.h"

namespace ferry {

struct AtomicWriteOptions {
  // fsync the file and the directory. Off only where a caller's contract
  // says a crash may lose the write (the local store with sync disabled).
  bool sync = true;
  // Where the temporary file goes; empty = the target's directory. Must be
  // on the target's file system.
  std::string temp_dir;
};

Status WriteFileAtomic(const std::string& path, std::string_view data,
                       const AtomicWriteOptions& options = {});

// A temporary file's name in `dir`: "dir/.%tmp.<16 hex>" (the name is
// reserved in every directory ferry owns; readers skip it).
std::string TempFileIn(const std::string& dir);

// Writes all of `data` at the current offset (retrying short writes, EINTR).
Status WriteAll(int fd, std::string_view data, std::string_view path);
Status FsyncFd(int fd, std::string_view path);
Status FsyncDir(const std::string& dir);

}  // namespace ferry
