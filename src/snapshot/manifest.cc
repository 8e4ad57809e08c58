#include "snapshot/manifest.h"

#include <nlohmann/json.hpp>

#include <set>

#include "base/json_text.h"
#include "crypto/digest.h"

namespace ferry::snapshot {
namespace {

using nlohmann::json;

constexpr char kFormat[] = "ferry-snapshot-1";

bool IsHash(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

json ToJson(const Manifest& m) {
  json j{{"format", kFormat},         {"name", m.name},       {"image_size", m.image_size},
         {"chunk_size", m.chunk_size}, {"created", m.created}, {"chunks", m.chunks},
         {"prefetch", m.prefetch}};
  if (m.learned_clones > 0) {
    j["learned"] = json{{"clones", m.learned_clones},
                        {"observations", m.learned_observations},
                        {"seen", m.prefetch_seen},
                        {"rank_sum", m.prefetch_rank_sum}};
  }
  return j;
}

Status Bad(const std::string& what) { return Status::Corruption("snapshot manifest: " + what); }

}  // namespace

uint64_t Manifest::ChunkLength(uint64_t i) const {
  uint64_t start = i * chunk_size;
  if (start >= image_size) return 0;
  return std::min(chunk_size, image_size - start);
}

bool ValidSnapshotName(std::string_view name) {
  if (name.empty() || name.size() > 128 || name.front() == '.') return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string EncodeManifest(const Manifest& m) {
  json j = ToJson(m);
  j["sha256"] = HexLower(Sha256(j.dump()));
  return j.dump(1) + "\n";
}

Result<Manifest> DecodeManifest(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Bad("not JSON");
  Manifest m;
  std::string sum;
  try {
    if (j.at("format").get<std::string>() != kFormat) {
      return Bad("format " + j.at("format").dump() + " is not " + kFormat);
    }
    sum = j.at("sha256").get<std::string>();
    m.name = j.at("name").get<std::string>();
    m.image_size = JsonInt<uint64_t>(j.at("image_size"));
    m.chunk_size = JsonInt<uint64_t>(j.at("chunk_size"));
    m.created = j.at("created").get<std::string>();
    m.chunks = j.at("chunks").get<std::vector<std::string>>();
    for (const auto& i : j.at("prefetch").get<std::vector<json>>()) m.prefetch.push_back(JsonInt<uint32_t>(i));
    if (j.contains("learned")) {
      const json& l = j.at("learned");
      m.learned_clones = JsonInt<uint32_t>(l.at("clones"));
      m.learned_observations = JsonInt<uint32_t>(l.at("observations"));
      for (const auto& n : l.at("seen").get<std::vector<json>>()) m.prefetch_seen.push_back(JsonInt<uint32_t>(n));
      for (const auto& r : l.at("rank_sum").get<std::vector<json>>()) {
        m.prefetch_rank_sum.push_back(JsonInt<uint64_t>(r));
      }
    }
  } catch (const json::exception& e) {
    return Bad(std::string("missing or mistyped field (") + e.what() + ")");
  }
  if (HexLower(Sha256(ToJson(m).dump())) != sum) return Bad("checksum mismatch (damaged or edited)");
  if (!ValidSnapshotName(m.name)) return Bad("bad name");
  if (m.chunk_size < kMinChunkSize || m.chunk_size > kMaxChunkSize || (m.chunk_size & (m.chunk_size - 1))) {
    return Bad("chunk size " + std::to_string(m.chunk_size) + " is not a power of two in 4 KiB..64 MiB");
  }
  if (m.chunks.size() != m.ChunkCount()) {
    return Bad(std::to_string(m.chunks.size()) + " chunks for an image of " + std::to_string(m.image_size) +
               " bytes");
  }
  for (const auto& h : m.chunks) {
    if (!h.empty() && !IsHash(h)) return Bad("chunk name '" + h.substr(0, 80) + "' is not a SHA-256");
  }
  if (m.learned_clones > 0) {
    if (m.learned_clones > m.learned_observations || m.prefetch_seen.size() != m.prefetch.size() ||
        m.prefetch_rank_sum.size() != m.prefetch.size()) {
      return Bad("learned order does not match its prefetch order");
    }
    for (uint32_t n : m.prefetch_seen) {
      if (n == 0 || n > m.learned_observations) return Bad("learned order counts " + std::to_string(n));
    }
  }
  std::set<uint32_t> seen;
  for (uint32_t i : m.prefetch) {
    if (i >= m.chunks.size() || !seen.insert(i).second) return Bad("bad prefetch index " + std::to_string(i));
  }
  return m;
}

}  // namespace ferry::snapshot
