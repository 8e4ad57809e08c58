#include "s3/sigv2_query.h"

#include <algorithm>
#include <array>
#include <map>

#include "base/strings.h"
#include "crypto/digest.h"

namespace ferry::s3 {
namespace {

// The query names that are part of the resource (botocore's and S3's list).
bool IsSubResource(std::string_view name) {
  static constexpr std::array<std::string_view, 39> kNames = {"accelerate",
                                                              "acl",
                                                              "analytics",
                                                              "cors",
                                                              "defaultObjectAcl",
                                                              "delete",
                                                              "inventory",
                                                              "lifecycle",
                                                              "location",
                                                              "logging",
                                                              "metrics",
                                                              "notification",
                                                              "object-lock",
                                                              "partNumber",
                                                              "policy",
                                                              "replication",
                                                              "requestPayment",
                                                              "response-cache-control",
                                                              "response-content-disposition",
                                                              "response-content-encoding",
                                                              "response-content-language",
                                                              "response-content-type",
                                                              "response-expires",
                                                              "restore",
                                                              "select",
                                                              "select-type",
                                                              "storageClass",
                                                              "tagging",
                                                              "torrent",
                                                              "uploadId",
                                                              "uploads",
                                                              "versionId",
                                                              "versioning",
                                                              "versions",
                                                              "website",
                                                              "attributes",
                                                              "legal-hold",
                                                              "retention",
                                                              "ownershipControls"};
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

}  // namespace

std::string SigV2StringToSign(const SigV2Request& r) {
  std::string out =
      r.method + "\n" + r.content_md5 + "\n" + r.content_type + "\n" + r.expires + "\n";
  std::map<std::string, std::string> amz;
  for (const auto& [name, value] : r.headers) {
    std::string n = AsciiLower(name);
    if (n.rfind("x-amz-", 0) != 0) continue;
    std::string& v = amz[n];
    if (!v.empty()) v += ",";
    v += TrimOws(value);
  }
  for (const auto& [name, value] : amz) out += name + ":" + value + "\n";
  out += r.encoded_path;
  std::vector<std::pair<std::string, std::string>> sub;
  for (const auto& kv : r.query) {
    if (IsSubResource(kv.first)) sub.push_back(kv);
  }
  std::sort(sub.begin(), sub.end());
  for (size_t i = 0; i < sub.size(); ++i) {
    out += (i == 0 ? "?" : "&") + sub[i].first;
    if (!sub[i].second.empty()) out += "=" + sub[i].second;
  }
  return out;
}

std::string SigV2Signature(std::string_view secret, std::string_view string_to_sign) {
  return Base64Encode(HmacSha1(secret, string_to_sign));
}

}  // namespace ferry::s3
