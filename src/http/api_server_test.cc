#include "http/api_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

#include "base/test_socket.h"

namespace ferry::http {
namespace {

// One HTTP/1.1 exchange over a fresh connection; the whole answer.
std::string Exchange(uint16_t port, const std::string& target) {
  int fd = ConnectLoopback(port);
  if (fd < 0) return "";
  std::string req = "GET " + target + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
  (void)::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
    out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

// A handler that throws (a bug) costs that request a 500 with a JSON
// error, not the process: the server goes on answering.
TEST(ApiServerTest, AHandlerThatThrowsIsA500AndTheServerGoesOn) {
  ApiServer server("127.0.0.1:0", [](const ServerRequest& r) -> ApiResponse {
    if (r.target == "/boom") throw std::runtime_error("bug");
    return {200, "application/json", "{\"ok\": true}\n"};
  });
  ASSERT_TRUE(server.Start().ok());
  std::string boom = Exchange(server.port(), "/boom");
  EXPECT_EQ(boom.rfind("HTTP/1.1 500", 0), 0u) << boom;
  EXPECT_NE(boom.find("{\"error\": \"internal error\"}"), std::string::npos) << boom;
  std::string ok = Exchange(server.port(), "/fine");
  EXPECT_EQ(ok.rfind("HTTP/1.1 200", 0), 0u) << ok;
  EXPECT_NE(ok.find("{\"ok\": true}"), std::string::npos) << ok;
}

}  // namespace
}  // namespace ferry::http
