#include "volume/daemon_requests.h"

#include <nlohmann/json.hpp>

#include "volume/volume.h"
#include "volume/volume_dir.h"

namespace ferry::volume {

using nlohmann::json;

Result<CreateRequest> ParseCreateRequest(std::string_view body) {
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  const char* kShape =
      "expected {\"name\": ..., \"from\": \"REPOSITORY/SNAPSHOT\", \"size\"?, \"count\"?}";
  if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument(kShape);
  auto name = j.find("name"), from = j.find("from"), size = j.find("size"), count = j.find("count");
  if (name == j.end() || from == j.end() || !name->is_string() || !from->is_string()) {
    return Status::InvalidArgument(kShape);
  }
  CreateRequest r;
  r.from = from->get<std::string>();
  if (size != j.end()) {
    // (nlohmann parses a non-negative integer as unsigned)
    if (!size->is_number_unsigned()) return Status::InvalidArgument("size must be a byte count");
    r.size = size->get<uint64_t>();
  }
  uint64_t n = 1;
  if (count != j.end()) n = count->is_number_unsigned() ? count->get<uint64_t>() : 0;
  if (n < 1 || n > kMaxCreateCount)
    return Status::InvalidArgument("count must be 1.." + std::to_string(kMaxCreateCount));
  const std::string base = name->get<std::string>();
  for (uint64_t i = 0; i < n; ++i) {
    r.names.push_back(n == 1 ? base : base + "-" + std::to_string(i));
    if (!ValidVolumeName(r.names.back()))
      return Status::InvalidArgument("bad volume name '" + r.names.back() + "'");
  }
  return r;
}

Result<std::string> ParseSnapshotRequest(std::string_view body) {
  const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("to") || !j["to"].is_string()) {
    return Status::InvalidArgument("expected {\"to\": \"REPOSITORY/NAME\"}");
  }
  return j["to"].get<std::string>();
}

json DescribeVolume(const std::string& name, const std::string& from, const std::string& pool, uint64_t size,
                    const VolumeStats& s) {
  return {{"name", name},
          {"from", from},
          {"pool", pool},
          {"size", size},
          {"chunks", s.chunks},
          {"hydrated", s.present},
          {"state", s.present == s.chunks ? "hydrated" : "hydrating"},
          {"triggers", s.triggers},
          {"background", s.background},
          {"hinted", s.hinted},
          {"fetched_bytes", s.fetched_bytes},
          {"bytes_from_origin", s.origin_bytes},
          {"bytes_from_cache", s.cache_bytes},
          {"bytes_written", s.written_bytes},
          {"written_chunks", s.written},
          {"fetch_errors", s.fetch_errors}};
}

}  // namespace ferry::volume
