#include "s3/flexible_checksum.h"

#include <utility>
#include <vector>

#include "base/strings.h"
#include "crypto/digest.h"
#include "s3/aws_chunked.h"
#include "s3/sigv4_verify.h"

namespace ferry::s3 {
namespace {

Status ChecksumInvalid(std::string message) {
  return S3ErrorStatus(400, "InvalidRequest", std::move(message));
}

}  // namespace

std::string_view ChecksumTypeName(ChecksumType t) {
  return t == ChecksumType::kComposite ? "COMPOSITE" : "FULL_OBJECT";
}

std::optional<ChecksumType> ParseChecksumType(std::string_view name) {
  if (EqualsIgnoreCase(name, "COMPOSITE")) return ChecksumType::kComposite;
  if (EqualsIgnoreCase(name, "FULL_OBJECT")) return ChecksumType::kFullObject;
  return std::nullopt;
}

Result<ObjectChecksum> MultipartChecksumPlan(const KeyValues& h) {
  const std::string* alg = FindValue(h, "x-amz-checksum-algorithm");
  const std::string* type = FindValue(h, "x-amz-checksum-type");
  ObjectChecksum plan{kDefaultChecksumAlgorithm, "", ChecksumType::kFullObject};
  if (alg != nullptr) {
    auto a = ParseChecksumAlgorithm(*alg);
    if (!a) return ChecksumInvalid("Checksum algorithm " + *alg + " is not supported.");
    plan.algorithm = *a;
    plan.type =
        *a == ChecksumAlgorithm::kCrc64Nvme ? ChecksumType::kFullObject : ChecksumType::kComposite;
  }
  if (type != nullptr) {
    auto t = ParseChecksumType(*type);
    if (!t) return ChecksumInvalid("Checksum type " + *type + " is not supported.");
    plan.type = *t;
  }
  const bool sha =
      plan.algorithm == ChecksumAlgorithm::kSha1 || plan.algorithm == ChecksumAlgorithm::kSha256;
  if ((sha && plan.type == ChecksumType::kFullObject) ||
      (plan.algorithm == ChecksumAlgorithm::kCrc64Nvme && plan.type == ChecksumType::kComposite)) {
    return ChecksumInvalid("The " + std::string(ChecksumTypeName(plan.type)) +
                           " checksum type cannot be used with the " +
                           std::string(ChecksumAlgorithmName(plan.algorithm)) + " algorithm.");
  }
  return plan;
}

std::string CompositeChecksum(ChecksumAlgorithm a, const std::vector<std::string>& parts) {
  Checksummer summer(a);
  std::string raw;
  for (const std::string& part : parts) {
    raw.clear();
    Base64Decode(part, &raw);  // stored values are valid
    summer.Update(raw);
  }
  return summer.FinishBase64() + "-" + std::to_string(parts.size());
}

void AddChecksumHeaders(const ObjectChecksum& c, KeyValues* headers) {
  headers->emplace_back(std::string(ChecksumHeaderName(c.algorithm)), c.value);
  headers->emplace_back("x-amz-checksum-type", std::string(ChecksumTypeName(c.type)));
}

Result<ChecksumCheck> ChecksumCheck::FromHeaders(const KeyValues& headers,
                                                 std::optional<ChecksumAlgorithm> otherwise) {
  std::vector<std::pair<ChecksumAlgorithm, std::string>> named;  // value "": a trailer
  for (const auto& [name, value] : headers) {
    if (name == "x-amz-trailer") {
      for (const std::string& trailer : ParseTrailerNames(value)) {
        if (auto a = ChecksumFromHeaderName(trailer)) named.emplace_back(*a, "");
      }
    } else if (auto a = ChecksumFromHeaderName(name)) {
      if (!IsChecksumValue(*a, value)) {
        return ChecksumInvalid("Value for " + name + " header is invalid.");
      }
      named.emplace_back(*a, value);
    }
  }
  ChecksumCheck check;
  if (named.size() > 1) return ChecksumInvalid("Expecting a single x-amz-checksum- header.");
  if (named.size() == 1) {
    check.summer_.emplace(named[0].first);
    check.expected_ = std::move(named[0].second);
  } else if (otherwise) {
    check.summer_.emplace(*otherwise);
    check.compare_ = false;
  }
  return check;
}

std::optional<ObjectChecksum> ChecksumCheck::declared() const {
  if (!summer_ || !compare_ || expected_.empty()) return std::nullopt;
  return ObjectChecksum{summer_->algorithm(), expected_};
}

void ChecksumCheck::Update(std::string_view decoded) {
  if (summer_) summer_->Update(decoded);
}

Result<std::optional<ObjectChecksum>> ChecksumCheck::Finish(const KeyValues& trailers) {
  if (!summer_) return std::optional<ObjectChecksum>();
  ChecksumAlgorithm a = summer_->algorithm();
  if (!compare_) return std::optional<ObjectChecksum>(ObjectChecksum{a, summer_->FinishBase64()});
  std::string want = expected_;
  if (want.empty()) {
    const std::string* sent = FindValue(trailers, ChecksumHeaderName(a));
    if (sent == nullptr) {
      return ChecksumInvalid("The trailer " + std::string(ChecksumHeaderName(a)) +
                             " did not arrive.");
    }
    if (!IsChecksumValue(a, *sent)) {
      return ChecksumInvalid("Value for " + std::string(ChecksumHeaderName(a)) +
                             " trailing header is invalid.");
    }
    want = *sent;
  }
  std::string got = summer_->FinishBase64();
  if (got != want) {
    return S3ErrorStatus(400, "BadDigest",
                         "The " + std::string(ChecksumAlgorithmName(a)) +
                             " you specified did not match the calculated checksum.");
  }
  return std::optional<ObjectChecksum>(ObjectChecksum{a, std::move(got)});
}

}  // namespace ferry::s3
