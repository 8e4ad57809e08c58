#pragma once
// Where a server listens, as users write it on the command line:
//
//   127.0.0.1:8080     an IPv4 address and port (port 0: the kernel picks one)
//   [::1]:8080         an IPv6 address in brackets
//   localhost:8080     the loopback address (127.0.0.1)
//   :8080              every IPv4 address (0.0.0.0)
//   unix:/run/x.sock   a Unix-domain stream socket at that path
//
// Host names other than localhost are refused: a server binds addresses,
// and a name that resolves to several (or to a different one tomorrow) is a
// surprise. Pure parsing, no sockets.

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace ferry::net {

struct ListenAddress {
  enum class Kind { kTcp, kUnix };
  Kind kind = Kind::kTcp;
  std::string host;  // an IP literal without brackets (kTcp)
  uint16_t port = 0;  // kTcp
  std::string path;  // kUnix

  bool is_unix() const { return kind == Kind::kUnix; }
  // "127.0.0.1:8080", "[::1]:8080", "unix:/run/x.sock" (with `port` for TCP).
  std::string ToString() const;
  bool operator==(const ListenAddress&) const = default;
};

// A one-line kInvalidArgument naming `text` when it is none of the forms above.
Result<ListenAddress> ParseListenAddress(std::string_view text);

}  // namespace ferry::net
