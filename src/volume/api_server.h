#pragma once
// The volume daemon's control API transport: a small HTTP/1.1 server
// (keep-alive, requests read by http::RequestReader with its limits and
// RFC 9112 checks) that hands each request to a handler on a worker
// thread. Asio stays inside api_server.cc.

#include <chrono>
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
  // `client_timeout` bounds the wait for each whole request (and for the
  // next one on a kept-alive connection) and each write of an answer; a
  // client past it is disconnected.
  ApiServer(std::string listen, ApiHandler handler,
            std::chrono::milliseconds client_timeout = std::chrono::milliseconds(60'000));
  ~ApiServer();  // stops
  Status Start();
  uint16_t port() const;
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ferry::volume
