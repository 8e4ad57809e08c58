#pragma once
// Where `ferry cache serve` sends a request, and under which cache key. Only
// configured origins are reachable, so the cache is never an open proxy:
// a request goes to the origin mapped to its host (--origin-host-map
// HOST=URL), else to the default origin (--origin URL), else nowhere. The
// request's own host only picks among those; it never names a destination.
// Pure.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "http/endpoint.h"

namespace ferry::cache {

struct Origin {
  http::Endpoint endpoint;
  std::string base_path;  // "" or "/prefix" (no trailing '/'): prepended to every path
};

struct Routing {
  std::optional<Origin> fallback;                     // --origin
  std::vector<std::pair<std::string, Origin>> hosts;  // lower-case host (no port) -> origin
};

// From the command line: `origin` may be empty when `host_map` is not;
// each map item is HOST=URL. A bad URL, a duplicate host or an item
// without '=' is a one-line kInvalidArgument.
Result<Routing> ParseRouting(std::string_view origin, const std::vector<std::string>& host_map);

struct Route {
  const Origin* origin = nullptr;  // points into the Routing
  std::string host;                // the host routed by (lower case, no port)
  std::string path;                // the request's own origin-form (what a parent tier is sent)
  std::string target;              // origin-form to send: base path + path + query
  std::string cache_key;           // origin URL + target
};

// Routes a request by its Host header and request-target (origin-form
// "/p?q", or absolute-form "http://h/p?q", whose host then replaces the
// Host header as RFC 9112 3.2.2 says). A target of another form, or with
// whitespace or control characters, is kInvalidArgument (answer 400); a
// host with no origin when there is no default is kNotFound (answer 421).
Result<Route> RouteRequest(const Routing& routing, std::string_view host_header,
                           std::string_view target);

}  // namespace ferry::cache
