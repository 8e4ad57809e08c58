#include "s3/flexible_checksum.h"

#include <utility>
#include <vector>

#include "s3/aws_chunked.h"
#include "s3/sigv4_verify.h"

namespace ferry::s3 {
namespace {

Status ChecksumInvalid(std::string message) {
  return S3ErrorStatus(400, "InvalidRequest", std::move(message));
}

}  // namespace

Result<ChecksumCheck> ChecksumCheck::FromHeaders(const KeyValues& headers) {
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
  }
  return check;
}

void ChecksumCheck::Update(std::string_view decoded) {
  if (summer_) summer_->Update(decoded);
}

Result<std::optional<ObjectChecksum>> ChecksumCheck::Finish(const KeyValues& trailers) {
  if (!summer_) return std::optional<ObjectChecksum>();
  ChecksumAlgorithm a = summer_->algorithm();
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
