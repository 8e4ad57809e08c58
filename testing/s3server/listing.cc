#include "listing.h"

#include <algorithm>

#include "crypto/digest.h"

namespace ferry::s3server {
namespace {

constexpr std::string_view kTokenMagic = "ferry1:";

}  // namespace

ListResult ListKeys(const KeyIndex& index, const ListParams& params) {
  ListResult result;
  const int max_keys = std::clamp(params.max_keys, 0, 1000);
  if (max_keys == 0) return result;

  const std::string& start = std::max(params.prefix, params.after);
  int emitted = 0;
  for (auto it = index.lower_bound(start); it != index.end(); ++it) {
    const std::string& key = it->first;
    if (!std::string_view(key).starts_with(params.prefix)) break;
    if (key <= params.after) continue;

    std::string common;
    if (!params.delimiter.empty()) {
      size_t pos = key.find(params.delimiter, params.prefix.size());
      if (pos != std::string::npos) common = key.substr(0, pos + params.delimiter.size());
    }
    if (!common.empty()) {
      if (!params.prefix_after.empty() && common <= params.prefix_after) continue;
      if (!result.common_prefixes.empty() && result.common_prefixes.back() == common) continue;
      // A common prefix's keys are contiguous: it is listed at its first key
      // directly under it.
      if (params.forget_prefixes &&
          key.find(params.delimiter, common.size()) != std::string::npos) {
        continue;
      }
    }
    if (emitted == max_keys) {
      result.truncated = true;
      break;
    }
    ++emitted;
    if (common.empty()) {
      result.objects.push_back(it->second);
      result.last_item = key;
    } else {
      result.common_prefixes.push_back(common);
      result.last_item = std::move(common);
    }
  }
  if (result.truncated) result.resume_after = result.last_item;
  return result;
}

ListParams ByteOrderParams(const ListRequest& request) {
  ListParams params;
  params.prefix = request.prefix;
  params.delimiter = request.delimiter;
  params.max_keys = request.max_keys;
  params.after = request.start_after;
  if (!request.v2) {
    params.prefix_after = request.start_after;
  } else if (request.token) {
    params.prefix_after = *request.token;
    params.after = std::max(params.after, *request.token);
  }
  return params;
}

std::string EncodeContinuationToken(std::string_view last_item) {
  std::string raw(kTokenMagic);
  raw += last_item;
  return Base64Encode(raw);
}

Result<std::string> DecodeContinuationToken(std::string_view token) {
  std::string raw;
  if (!Base64Decode(token, &raw) || !std::string_view(raw).starts_with(kTokenMagic)) {
    return S3Error(400, "InvalidArgument", "The continuation token provided is incorrect");
  }
  return raw.substr(kTokenMagic.size());
}

}  // namespace ferry::s3server
