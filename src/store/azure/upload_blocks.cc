#include "store/azure/upload_blocks.h"

#include <set>

#include "store/azure/upload_ids.h"

namespace ferry::azure {

UploadBlocks BlocksOf(const std::vector<Block>& blocks, std::string_view nonce) {
  UploadBlocks u;
  for (const Block& b : blocks) {
    std::string n;
    int part = 0;
    if (!ParseBlockId(b.name, &n, &part) || n != nonce) continue;
    if (b.committed) {
      u.committed.push_back(part);
    } else if (part == kMarkerPart) {
      u.marker = true;
    } else if (part == kTombstonePart) {
      u.tombstone = true;
    } else {
      u.parts[part] = b.size;
    }
  }
  return u;
}

bool CommittedAs(const UploadBlocks& u, const std::vector<PartInfo>& parts) {
  if (u.committed.empty() || u.committed.size() != parts.size()) return false;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (u.committed[i] != parts[i].number) return false;
  }
  return true;
}

Status CheckParts(const std::vector<PartInfo>& parts, const UploadBlocks& u) {
  if (parts.empty()) return Status::InvalidArgument("invalid part list: no parts");
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0 && parts[i].number <= parts[i - 1].number) {
      return Status::InvalidArgument("invalid part order");
    }
    auto it = u.parts.find(parts[i].number);
    if (it == u.parts.end()) {
      return Status::InvalidArgument("invalid part: part " + std::to_string(parts[i].number) +
                                     " was not uploaded");
    }
    if (parts[i].size != 0 && it->second != parts[i].size) {
      return Status::InvalidArgument("invalid part: part " + std::to_string(parts[i].number) +
                                     " has another size");
    }
  }
  return Status::Ok();
}

std::vector<std::string> OpenUploads(const std::vector<Block>& blocks) {
  std::set<std::string> nonces;
  for (const Block& b : blocks) {
    std::string nonce;
    int part = 0;
    if (!b.committed && ParseBlockId(b.name, &nonce, &part)) nonces.insert(nonce);
  }
  std::vector<std::string> out;
  for (const std::string& nonce : nonces) {
    if (BlocksOf(blocks, nonce).Open()) out.push_back(nonce);
  }
  return out;
}

}  // namespace ferry::azure
