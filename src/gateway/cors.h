#pragma once
// Cross-origin access to the gateway from browsers (CORS, the Fetch
// standard), as S3's bucket CORS rules give it: a web page on an allowed
// origin may PUT to a presigned URL and read the object back.
//
// Pure policy: the gateway asks these functions and sets what they return.
//  - A preflight (OPTIONS with Origin and Access-Control-Request-Method) is
//    answered without authentication, as S3 answers it: 200 with the
//    allowed method and the requested headers when the origin and method
//    are allowed, else 403 AccessForbidden.
//  - Every other answer to an allowed origin (errors too, so a page can read
//    why) names the origin, the headers a page may read (ETag, the
//    checksums, the request id) and Vary: Origin.
// No origin configured: no CORS headers at all, and every preflight 403.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/headers.h"

namespace ferry::gateway {

struct CorsPolicy {
  // Exact origins ("https://app.example.com", scheme://host[:port] as the
  // browser sends it), or "*" for any.
  std::vector<std::string> origins;
  // How long a browser may keep a preflight's answer.
  std::chrono::seconds max_age{600};

  bool enabled() const { return !origins.empty(); }
};

// Checks a --cors-origin value: "*" or scheme://host[:port] with no path.
// One-line error text, or nullopt when it is fine.
std::optional<std::string> CorsOriginProblem(std::string_view origin);

// The value of Access-Control-Allow-Origin for a request from `origin`
// ("*" under a wildcard, else the origin itself), or nullopt when it is not
// allowed or absent.
std::optional<std::string> AllowedOrigin(const CorsPolicy& policy, std::string_view origin);

struct PreflightAnswer {
  int status = 200;  // 200, or 403 when refused
  http::Headers headers;
  std::string refusal;  // why it was refused (the error's message)
};

// The answer to OPTIONS carrying `origin`, `method`
// (Access-Control-Request-Method) and `request_headers`
// (Access-Control-Request-Headers, as sent).
PreflightAnswer Preflight(const CorsPolicy& policy, std::string_view origin,
                          std::string_view method, std::string_view request_headers);

// Adds the headers an actual (non-preflight) answer to `origin` carries.
void AddCorsHeaders(const CorsPolicy& policy, std::string_view origin, http::Headers* headers);

}  // namespace ferry::gateway
