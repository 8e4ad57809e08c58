#include "http/endpoint.h"

#include <charconv>

namespace ferry::http {

std::string Endpoint::HostHeader() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if ((tls && port != 443) || (!tls && port != 80)) h += ":" + std::to_string(port);
  return h;
}

std::string Endpoint::ToString() const {
  return std::string(tls ? "https://" : "http://") + HostHeader();
}

Result<Endpoint> ParseEndpoint(std::string_view url, std::string* path) {
  Endpoint ep;
  std::string_view rest;
  if (url.substr(0, 7) == "http://") {
    rest = url.substr(7);
  } else if (url.substr(0, 8) == "https://") {
    ep.tls = true;
    rest = url.substr(8);
  } else {
    return Status::InvalidArgument("endpoint " + std::string(url) +
                                   ": scheme must be http:// or https://");
  }
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (path) *path = slash == std::string_view::npos ? "" : std::string(rest.substr(slash));
  if (authority.find('@') != std::string_view::npos) {
    return Status::InvalidArgument("endpoint " + std::string(url) +
                                   ": credentials in the URL are not accepted");
  }
  std::string_view port_str;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return Status::InvalidArgument("endpoint " + std::string(url) + ": bad IPv6 literal");
    }
    ep.host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return Status::InvalidArgument("endpoint " + std::string(url) + ": bad host");
      }
      port_str = after.substr(1);
    }
  } else {
    size_t colon = authority.rfind(':');
    ep.host = authority.substr(0, colon);
    if (colon != std::string_view::npos) port_str = authority.substr(colon + 1);
  }
  if (ep.host.empty()) {
    return Status::InvalidArgument("endpoint " + std::string(url) + ": missing host");
  }
  if (port_str.empty()) {
    ep.port = ep.tls ? 443 : 80;
  } else {
    unsigned v = 0;
    auto [p, ec] = std::from_chars(port_str.data(), port_str.data() + port_str.size(), v);
    if (ec != std::errc() || p != port_str.data() + port_str.size() || v == 0 || v > 65535) {
      return Status::InvalidArgument("endpoint " + std::string(url) + ": bad port");
    }
    ep.port = static_cast<uint16_t>(v);
  }
  return ep;
}

}  // namespace ferry::http
