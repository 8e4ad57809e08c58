#pragma once
// What disk_store.cc, disk_store_open.cc and disk_store_compact.cc share.
// Not for use outside the DiskStore.

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "crypto/digest.h"

namespace ferry::cache::disk_store_detail {

// A key's file name: its SHA-256 in hex, so no key can name a path.
inline std::string HashOf(std::string_view key) { return HexLower(Sha256(key)); }

inline bool IsHashName(std::string_view n) {
  return n.size() == 64 && std::all_of(n.begin(), n.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// The names in a directory but . and .. (none when it cannot be read).
inline std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
  }
  return names;
}

inline Status MakeDir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return Status::Ok();
  return Status::FromErrno(errno, "mkdir " + path);
}

}  // namespace ferry::cache::disk_store_detail
