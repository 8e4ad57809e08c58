#include "gateway/cors.h"

#include <algorithm>

#include "base/strings.h"

namespace ferry::gateway {
namespace {

constexpr std::string_view kMethods[] = {"GET", "HEAD", "PUT", "POST", "DELETE"};
constexpr std::string_view kAllowMethods = "GET, HEAD, PUT, POST, DELETE";
// What a page may read of an answer beyond the CORS-safelisted fields.
constexpr std::string_view kExposeHeaders =
    "ETag, Content-Range, Accept-Ranges, x-amz-request-id, x-amz-version-id, "
    "x-amz-checksum-crc32, x-amz-checksum-crc32c, x-amz-checksum-crc64nvme, "
    "x-amz-checksum-sha1, x-amz-checksum-sha256, x-amz-checksum-type, x-ferry-answer";

bool IsTokenChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// Access-Control-Request-Headers lower-cased and re-joined, or nullopt
// when it holds anything but field names.
std::optional<std::string> HeaderList(std::string_view list) {
  std::string out;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view name = TrimOws(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (name.empty()) continue;
    if (!std::all_of(name.begin(), name.end(), IsTokenChar)) return std::nullopt;
    if (!out.empty()) out += ", ";
    out += AsciiLower(name);
  }
  return out;
}

}  // namespace

std::optional<std::string> CorsOriginProblem(std::string_view origin) {
  if (origin == "*") return std::nullopt;
  size_t scheme_end = origin.find("://");
  if (scheme_end == std::string_view::npos || scheme_end == 0) {
    return "--cors-origin " + std::string(origin) +
           ": expected * or scheme://host[:port], as a browser sends Origin";
  }
  std::string_view rest = origin.substr(scheme_end + 3);
  if (rest.empty() || rest.find_first_of("/?# ") != std::string_view::npos) {
    return "--cors-origin " + std::string(origin) + ": an origin has no path, query or spaces";
  }
  return std::nullopt;
}

std::optional<std::string> AllowedOrigin(const CorsPolicy& policy, std::string_view origin) {
  if (origin.empty()) return std::nullopt;
  for (const std::string& allowed : policy.origins) {
    if (allowed == "*") return std::string("*");
    if (allowed == origin) return std::string(origin);
  }
  return std::nullopt;
}

PreflightAnswer Preflight(const CorsPolicy& policy, std::string_view origin,
                          std::string_view method, std::string_view request_headers) {
  PreflightAnswer a;
  auto refuse = [&](std::string why) {
    a.status = 403;
    a.refusal = "CORSResponse: " + std::move(why);
    return a;
  };
  if (!policy.enabled()) return refuse("CORS is not enabled on this gateway (--cors-origin)");
  if (origin.empty() || method.empty()) {
    return refuse("a preflight needs Origin and Access-Control-Request-Method");
  }
  std::optional<std::string> allowed = AllowedOrigin(policy, origin);
  if (!allowed) return refuse("origin " + std::string(origin) + " is not allowed");
  if (std::find(std::begin(kMethods), std::end(kMethods), method) == std::end(kMethods)) {
    return refuse("method " + std::string(method) + " is not allowed");
  }
  std::optional<std::string> headers = HeaderList(request_headers);
  if (!headers) return refuse("Access-Control-Request-Headers is malformed");
  http::SetHeader(&a.headers, "Access-Control-Allow-Origin", *allowed);
  http::SetHeader(&a.headers, "Access-Control-Allow-Methods", std::string(kAllowMethods));
  if (!headers->empty()) http::SetHeader(&a.headers, "Access-Control-Allow-Headers", *headers);
  http::SetHeader(&a.headers, "Access-Control-Expose-Headers", std::string(kExposeHeaders));
  http::SetHeader(&a.headers, "Access-Control-Max-Age", std::to_string(policy.max_age.count()));
  http::SetHeader(&a.headers, "Vary",
                  "Origin, Access-Control-Request-Method, Access-Control-Request-Headers");
  return a;
}

void AddCorsHeaders(const CorsPolicy& policy, std::string_view origin, http::Headers* headers) {
  if (!policy.enabled()) return;
  std::optional<std::string> allowed = AllowedOrigin(policy, origin);
  // Said even when refused, so a shared cache keeps an allowed origin's
  // answer apart from this one.
  std::string vary = http::HeaderValue(*headers, "Vary");
  if (vary.empty()) {
    http::SetHeader(headers, "Vary", "Origin");
  } else if (AsciiLower(vary).find("origin") == std::string::npos) {
    http::SetHeader(headers, "Vary", vary + ", Origin");
  }
  if (!allowed) return;
  http::SetHeader(headers, "Access-Control-Allow-Origin", *allowed);
  http::SetHeader(headers, "Access-Control-Expose-Headers", std::string(kExposeHeaders));
}

}  // namespace ferry::gateway
