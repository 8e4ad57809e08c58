#include "cli/volume_api.h"

#include "http/client.h"
#include "http/endpoint.h"
#include "store/stream.h"

namespace ferry::cli {

std::string ApiAnswer::Error() const {
  if (!json.is_discarded() && json.is_object() && json.contains("error") && json["error"].is_string()) {
    return json["error"].get<std::string>();
  }
  return body;
}

Result<std::unique_ptr<VolumeApi>> VolumeApi::Connect(const std::string& api) {
  if (api.rfind("unix:", 0) == 0) {
    return Status::InvalidArgument("--api " + api + ": the volume commands reach the daemon over TCP only");
  }
  FERRY_ASSIGN_OR_RETURN(http::Endpoint ep, http::ParseEndpoint("http://" + api));
  std::unique_ptr<VolumeApi> v(new VolumeApi());
  v->endpoint_ = std::make_unique<http::Endpoint>(std::move(ep));
  http::ClientOptions co;
  co.io_threads = 1;
  co.connect_timeout = std::chrono::milliseconds(5000);
  v->client_ = std::make_unique<http::Client>(co);
  return v;
}

VolumeApi::~VolumeApi() = default;

Result<ApiAnswer> VolumeApi::Call(const std::string& method, const std::string& path, const std::string& body) {
  http::Request r;
  r.method = method;
  r.target = path;
  StringSource src(body);
  if (!body.empty()) {
    r.body = &src;
    r.body_size = body.size();
    r.headers.emplace_back("Content-Type", "application/json");
  }
  FERRY_ASSIGN_OR_RETURN(http::Response resp, client_->Send(*endpoint_, r, nullptr));
  ApiAnswer a;
  a.status = resp.status;
  a.body = std::move(resp.body);
  a.json = nlohmann::json::parse(a.body, nullptr, false);
  return a;
}

}  // namespace ferry::cli
