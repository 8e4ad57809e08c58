#include "ops/checksum_carry.h"

#include <string>

namespace ferry {

std::optional<ObjectChecksum> MultipartChecksumFor(const std::optional<ObjectChecksum>& source) {
  if (!source) return std::nullopt;
  ObjectChecksum plan{source->algorithm, "", source->type};
  switch (source->algorithm) {
    case ChecksumAlgorithm::kSha1:
    case ChecksumAlgorithm::kSha256:
      plan.type = ChecksumType::kComposite;
      break;
    case ChecksumAlgorithm::kCrc64Nvme:
      plan.type = ChecksumType::kFullObject;
      break;
    case ChecksumAlgorithm::kCrc32:
    case ChecksumAlgorithm::kCrc32c:
      break;
  }
  return plan;
}

Status CompareWholeChecksums(const std::optional<ObjectChecksum>& source,
                             const std::optional<ObjectChecksum>& destination) {
  if (!source || !destination || source->type != ChecksumType::kFullObject ||
      destination->type != ChecksumType::kFullObject ||
      source->algorithm != destination->algorithm) {
    return Status::Ok();
  }
  if (source->value == destination->value) return Status::Ok();
  return Status::Corruption("the destination's " +
                            std::string(ChecksumAlgorithmName(source->algorithm)) + " " +
                            destination->value + " is not the source's " + source->value);
}

Status CheckCarriedChecksum(const std::optional<ObjectChecksum>& source, ObjectStore& dst,
                            std::string_view key) {
  if (!source || source->type != ChecksumType::kFullObject) return Status::Ok();
  FERRY_ASSIGN_OR_RETURN(ObjectInfo info, dst.Head(key));
  return CompareWholeChecksums(source, info.checksum);
}

}  // namespace ferry
