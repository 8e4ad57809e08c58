#pragma once
// A daemon's small control API (the volume daemon's, the migration
// worker's metrics) on ferry's HTTP server (http/server.h: keep-alive,
// request limits, deadlines, a graceful stop): JSON or text in and out,
// each request handled on a worker thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "http/server_request.h"

namespace ferry::http {

class Server;

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

using ApiHandler = std::function<ApiResponse(const http::ServerRequest&)>;

// The HTTP status for an error: the client's fault (400 bad input, 404,
// 409 in the way, 503 busy: retry), ours (500: local I/O, internal) or the
// object store's (502: anything else).
int HttpStatusOf(const Status& st);

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
  class Adapter;
  std::unique_ptr<Adapter> adapter_;
  std::unique_ptr<http::Server> server_;
};

}  // namespace ferry::http
