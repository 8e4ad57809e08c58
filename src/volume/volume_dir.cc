#include "volume/volume_dir.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/atomic_file.h"
#include "base/json_text.h"
#include "snapshot/manifest.h"

namespace ferry::volume {

std::string EncodeVolumeDescription(const VolumeDescription& d) {
  return DumpJson({{"name", d.name}, {"from", d.from}, {"size", d.size}});
}

Result<VolumeDescription> DecodeVolumeDescription(std::string_view text) {
  using nlohmann::json;
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto bad = [](const std::string& why) { return Status::Corruption("volume.json: " + why); };
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  auto name = j.find("name"), from = j.find("from"), size = j.find("size");
  if (name == j.end() || !name->is_string()) return bad("\"name\" is not a string");
  if (from == j.end() || !from->is_string()) return bad("\"from\" is not a string");
  if (size != j.end() && !size->is_number_unsigned()) {
    return bad("\"size\" is not a byte count");
  }
  VolumeDescription d{name->get<std::string>(), from->get<std::string>(),
                      size == j.end() ? 0 : size->get<uint64_t>()};
  if (!ValidVolumeName(d.name)) return bad("bad volume name");
  return d;
}

bool ValidVolumeName(std::string_view name) { return snapshot::ValidSnapshotName(name); }

Status MakeVolumeDir(const std::string& dir, const std::string& description) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir + "/volume.json", ec)) {
    return Status(ErrorCode::kAlreadyExists,
                  "a volume exists in " + dir + " (not attached; see the log)");
  }
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) return Status(ErrorCode::kIoError, dir + ": " + ec.message());
  return WriteFileAtomic(dir + "/volume.json", description + "\n");
}

}  // namespace ferry::volume
