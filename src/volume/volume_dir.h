#pragma once
// A new volume's directory and its volume.json, the commit point of a
// create (the daemon's, daemon.cc), and that description's encoding.

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace ferry::volume {

// What volume.json says: {"name": ..., "from": "REPOSITORY/SNAPSHOT",
// "size": BYTES}.
struct VolumeDescription {
  std::string name;
  std::string from;
  uint64_t size = 0;  // 0 (or absent): the snapshot's image size
};

std::string EncodeVolumeDescription(const VolumeDescription& d);
// kCorruption, one line, when `text` is not such a description: not JSON,
// not an object, a field missing or of another type, a bad volume name.
// Never throws.
Result<VolumeDescription> DecodeVolumeDescription(std::string_view text);

// A volume name: what a snapshot name may be (snapshot::ValidSnapshotName).
bool ValidVolumeName(std::string_view name);

// Makes `dir` with `description` (JSON text) as dir/volume.json, written
// atomically. A directory without volume.json is a create that died before
// it (nothing was acknowledged) and is cleared; a directory with one is a
// volume that exists on disk even when it is not attached (its repository
// failed at startup), and is never overwritten: kAlreadyExists.
Status MakeVolumeDir(const std::string& dir, const std::string& description);

}  // namespace ferry::volume
