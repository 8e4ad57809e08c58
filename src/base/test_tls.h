#pragma once
// For tests of TLS: a self-signed EC certificate made with the openssl
// command line (installed by make setup), and a client's TCP connection.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "base/test_shell.h"

namespace ferry {

// `name`.pem and `name`.key in `dir`, with the subject CN=`cn` and the
// subjectAltName `san` ("" for none). False when openssl failed.
inline bool MakeCert(const std::string& dir, const std::string& name, const std::string& cn,
                     const std::string& san) {
  std::string cmd = "cd " + dir +
                    " && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes " +
                    "-days 2 -subj /CN=" + cn + " -keyout " + name + ".key -out " + name + ".pem";
  if (!san.empty()) cmd += " -addext subjectAltName=" + san;
  return Shell(cmd).code == 0;
}

// A TCP connection to 127.0.0.1:port with a 5 s read timeout; -1 if refused.
inline int ConnectLoopback(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace ferry
