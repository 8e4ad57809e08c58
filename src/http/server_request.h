#pragma once
// One HTTP request as ferry's servers receive it (the cache proxy and the
// volume daemon's control API), read by http::RequestReader.

#include <memory>
#include <string>

#include "http/headers.h"

namespace ferry::http {

class RequestBody;  // http/request_body.h

struct ServerRequest {
  std::string method = "GET";
  std::string target = "/";
  Headers headers;   // as received
  std::string body;  // empty when `stream` is set
  // A body read as it arrives (Handler::StreamBody said so); else null.
  std::shared_ptr<RequestBody> stream;
  std::string peer;  // the client's IP address
  bool tls = false;  // received over TLS
  int version = 11;  // 10 or 11 (HTTP/1.x), 20 (HTTP/2)
};

}  // namespace ferry::http
