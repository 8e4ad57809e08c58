#include "http/api_server.h"

#include <spdlog/spdlog.h>

#include "http/server.h"

namespace ferry::http {

class ApiServer::Adapter : public http::Handler {
 public:
  explicit Adapter(ApiHandler handler) : handler_(std::move(handler)) {}
  // A handler that throws (a bug: handlers return errors as values) costs
  // that request a 500, not the process.
  http::ServerResponse Handle(const http::ServerRequest& req) override {
    ApiResponse a;
    try {
      a = handler_(req);
    } catch (const std::exception& e) {
      spdlog::error("api: {} {}: internal error: {}", req.method, req.target.substr(0, req.target.find('?')), e.what());
      a = ApiResponse{500, "application/json", "{\"error\": \"internal error\"}\n"};
    }
    http::ServerResponse r;
    r.status = a.status;
    r.headers.emplace_back("Content-Type", a.content_type);
    r.SetBody(std::move(a.body));
    return r;
  }

 private:
  ApiHandler handler_;
};

ApiServer::ApiServer(std::string listen, ApiHandler handler, std::chrono::milliseconds client_timeout)
    : adapter_(std::make_unique<Adapter>(std::move(handler))) {
  http::ServerOptions o;
  o.net.listen = std::move(listen);
  o.net.flag = "--api";
  o.net.worker_threads = 4;
  o.limits.body_limit = 1 << 20;
  o.client_timeout = client_timeout;
  server_ = std::make_unique<http::Server>(std::move(o), adapter_.get());
}

int HttpStatusOf(const Status& st) {
  switch (st.code()) {
    case ErrorCode::kInvalidArgument:
      return 400;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kAlreadyExists:
      return 409;
    case ErrorCode::kThrottled:
      return 503;
    case ErrorCode::kIoError:
    case ErrorCode::kInternal:
      return 500;
    default:
      return 502;
  }
}

ApiServer::~ApiServer() { Stop(); }
Status ApiServer::Start() { return server_->Start(); }
uint16_t ApiServer::port() const { return server_->port(); }
void ApiServer::Stop() { server_->Stop(); }

}  // namespace ferry::http
