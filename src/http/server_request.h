#pragma once
// One HTTP request as ferry's servers receive it (the cache proxy and the
// volume daemon's control API), read by http::RequestReader.

#include <string>

#include "http/headers.h"

namespace ferry::http {

struct ServerRequest {
  std::string method = "GET";
  std::string target = "/";
  Headers headers;   // as received
  std::string body;
  std::string peer;  // the client's IP address
  int version = 11;  // 10 or 11 (HTTP/1.x), 20 (HTTP/2)
};

}  // namespace ferry::http
