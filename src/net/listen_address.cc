#include "net/listen_address.h"

#include <arpa/inet.h>
#include <sys/un.h>

#include <charconv>

namespace ferry::net {
namespace {

bool IsIpv4(const std::string& s) {
  in_addr a{};
  return inet_pton(AF_INET, s.c_str(), &a) == 1;
}

bool IsIpv6(const std::string& s) {
  in6_addr a{};
  return inet_pton(AF_INET6, s.c_str(), &a) == 1;
}

Status Bad(std::string_view text, std::string_view why) {
  return Status::InvalidArgument("listen address '" + std::string(text) + "': " + std::string(why));
}

}  // namespace

std::string ListenAddress::ToString() const {
  if (is_unix()) return "unix:" + path;
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return h + ":" + std::to_string(port);
}

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  ListenAddress a;
  if (text.substr(0, 5) == "unix:") {
    a.kind = ListenAddress::Kind::kUnix;
    a.path = std::string(text.substr(5));
    if (a.path.empty()) return Bad(text, "expected unix:PATH");
    if (a.path.size() >= sizeof(sockaddr_un{}.sun_path)) return Bad(text, "the socket path is too long");
    if (a.path.find('\0') != std::string::npos) return Bad(text, "the socket path holds a NUL byte");
    return a;
  }
  std::string_view host, port;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return Bad(text, "expected [IPV6]:PORT");
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
    a.host = std::string(host);
    if (!IsIpv6(a.host)) return Bad(text, "not an IPv6 address");
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return Bad(text, "expected HOST:PORT or unix:PATH");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) return Bad(text, "put an IPv6 address in brackets");
    if (host.empty()) {
      a.host = "0.0.0.0";
    } else if (host == "localhost") {
      a.host = "127.0.0.1";
    } else {
      a.host = std::string(host);
      if (!IsIpv4(a.host)) return Bad(text, "not an IP address (give one; of host names only localhost)");
    }
  }
  unsigned v = 0;
  auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
  if (port.empty() || ec != std::errc() || p != port.data() + port.size() || v > 65535) {
    return Bad(text, "bad port");
  }
  a.port = static_cast<uint16_t>(v);
  return a;
}

}  // namespace ferry::net
