#pragma once
// The volume daemon's control API transport: a small HTTP/1.1 server
// (keep-alive, requests read by http::RequestReader with its limits and
// RFC 9112 checks) that hands each request to a handler on a worker
// thread. Asio stays inside api_server.cc.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "http/server_request.h"

namespace ferry::volume {

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

using ApiHandler = std::function<ApiResponse(const http::ServerRequest&)>;

class ApiServer {
 public:
  ApiServer(std::string listen, ApiHandler handler);
  ~ApiServer();  // stops
  Status Start();
  uint16_t port() const;
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ferry::volume
