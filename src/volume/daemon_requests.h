#pragma once
// The volume daemon's API request bodies and answers (daemon.cc), apart
// from the daemon. Bodies are parsed so that every malformed body — wrong types included — is a
// one-line kInvalidArgument, never an exception, and the parsing can be
// unit-tested and fuzzed (tests/fuzz/control_json_fuzz.cc).

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ferry::volume {

// POST /volumes {"name", "from": "REPOSITORY/SNAPSHOT", "size"?, "count"?}.
struct CreateRequest {
  std::string from;
  uint64_t size = 0;  // 0: the snapshot's image size
  std::vector<std::string>
      names;  // "name", or "name-0".."name-(count-1)"; each a valid volume name
};
inline constexpr int kMaxCreateCount = 10000;
Result<CreateRequest> ParseCreateRequest(std::string_view body);

// POST /volumes/NAME/snapshots {"to": "REPOSITORY/NEW"}: the "to".
Result<std::string> ParseSnapshotRequest(std::string_view body);

struct VolumeStats;

// GET /volumes/NAME (and each of GET /volumes): the volume's source, pool,
// size and VolumeStats.
nlohmann::json DescribeVolume(const std::string& name, const std::string& from, const std::string& pool,
                              uint64_t size, const VolumeStats& s);

}  // namespace ferry::volume
