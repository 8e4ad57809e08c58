#pragma once
// The volume daemon's control API (volume/daemon.h) as the CLI calls it:
// `ferry volume create|ls|status|rm` and the snapshot commands that ask a
// running daemon (prefetch order, snapshots of a running volume).

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"

namespace ferry::http {
class Client;
struct Endpoint;
}  // namespace ferry::http

namespace ferry::cli {

struct ApiAnswer {
  int status = 0;
  nlohmann::json json;  // discarded (is_discarded()) when the body is not JSON
  std::string body;
  // The daemon's one-line error: its "error" field, else the body.
  std::string Error() const;
};

class VolumeApi {
 public:
  // `api`: HOST:PORT or [V6]:PORT (TCP only). kInvalidArgument otherwise.
  static Result<std::unique_ptr<VolumeApi>> Connect(const std::string& api);
  ~VolumeApi();
  // One request with an optional JSON body; any answer the daemon gives
  // is a value (the caller reads its status), a failure to reach it an
  // error.
  Result<ApiAnswer> Call(const std::string& method, const std::string& path, const std::string& body = "");

 private:
  VolumeApi() = default;
  std::unique_ptr<http::Client> client_;
  std::unique_ptr<http::Endpoint> endpoint_;
};

}  // namespace ferry::cli
