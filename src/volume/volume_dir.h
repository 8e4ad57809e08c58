#pragma once
// A new volume's directory and its volume.json, the commit point of a
// create (the daemon's, daemon.cc).

#include <string>

#include "base/status.h"

namespace ferry::volume {

// Makes `dir` with `description` (JSON text) as dir/volume.json, written
// atomically. A directory without volume.json is a create that died before
// it (nothing was acknowledged) and is cleared; a directory with one is a
// volume that exists on disk even when it is not attached (its repository
// failed at startup), and is never overwritten: kAlreadyExists.
Status MakeVolumeDir(const std::string& dir, const std::string& description);

}  // namespace ferry::volume
