#include "store/s3/addressing.h"

namespace ferry::s3 {

std::string Addressing::PathFor(const std::string& bucket, std::string_view key) const {
  std::string path = path_style ? "/" + bucket : std::string();
  if (!key.empty() || !path_style) path += "/" + std::string(key);
  return path;
}

Result<Addressing> ResolveAddressing(const std::string& bucket, const std::string& endpoint_url,
                                     const std::string& region) {
  if (bucket.empty()) return Status::InvalidArgument("missing bucket name");
  Addressing a;
  if (!endpoint_url.empty()) {
    std::string path;
    FERRY_ASSIGN_OR_RETURN(a.endpoint, http::ParseEndpoint(endpoint_url, &path));
    if (!path.empty() && path != "/") {
      return Status::InvalidArgument("endpoint " + endpoint_url + ": a path is not supported");
    }
    return a;
  }
  a.endpoint.tls = true;
  a.endpoint.port = 443;
  a.path_style = bucket.find('.') != std::string::npos;
  a.endpoint.host = a.path_style ? "s3." + region + ".amazonaws.com"
                                 : bucket + ".s3." + region + ".amazonaws.com";
  return a;
}

}  // namespace ferry::s3
