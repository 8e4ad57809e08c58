#pragma once
// An HTTP(S) origin: scheme, host and port, parsed from a URL such as
// "https://s3.eu-west-1.amazonaws.com" or "http://127.0.0.1:9000".

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace ferry::http {

struct Endpoint {
  bool tls = false;
  std::string host;  // name or IP literal, without brackets
  uint16_t port = 0;

  // "host" or "host:port" when the port is not the scheme's default; the
  // value of the Host header.
  std::string HostHeader() const;
  // "https://host:port"
  std::string ToString() const;
  bool operator==(const Endpoint&) const = default;
};

// Accepts "http://h", "https://h:p", optionally with a trailing "/" or path
// (the path is returned in *path when non-null). Rejects other schemes,
// userinfo, empty hosts and bad ports with a one-line kInvalidArgument.
Result<Endpoint> ParseEndpoint(std::string_view url, std::string* path = nullptr);

}  // namespace ferry::http
