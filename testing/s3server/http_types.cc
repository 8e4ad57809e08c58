#include "http_types.h"

#include <strings.h>

namespace ferry::s3server {

const std::string* HttpRequest::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k == name) return &v;
  }
  return nullptr;
}

std::string HttpRequest::HeaderOr(std::string_view name, std::string fallback) const {
  const std::string* v = Header(name);
  return v ? *v : fallback;
}

void HttpResponse::SetHeader(std::string_view name, std::string value) {
  for (auto& [k, v] : headers) {
    if (k.size() == name.size() && strncasecmp(k.data(), name.data(), name.size()) == 0) {
      v = std::move(value);
      return;
    }
  }
  headers.emplace_back(std::string(name), std::move(value));
}

}  // namespace ferry::s3server
