#include "volume/volume_dir.h"

#include <filesystem>

#include "base/atomic_file.h"

namespace ferry::volume {

Status MakeVolumeDir(const std::string& dir, const std::string& description) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir + "/volume.json", ec)) {
    return Status(ErrorCode::kAlreadyExists, "a volume exists in " + dir + " (not attached; see the log)");
  }
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) return Status(ErrorCode::kIoError, dir + ": " + ec.message());
  return WriteFileAtomic(dir + "/volume.json", description + "\n");
}

}  // namespace ferry::volume
