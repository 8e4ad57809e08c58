#include "cache/routing.h"

#include "base/strings.h"

namespace ferry::cache {
namespace {

// Lower-case host without its port ("[::1]:8080" -> "[::1]").
std::string HostOnly(std::string_view h) {
  h = TrimOws(h);
  if (!h.empty() && h.front() == '[') {
    size_t close = h.find(']');
    return AsciiLower(close == std::string_view::npos ? h : h.substr(0, close + 1));
  }
  return AsciiLower(h.substr(0, h.find(':')));
}

Result<Origin> ParseOrigin(std::string_view url) {
  std::string path;
  FERRY_ASSIGN_OR_RETURN(http::Endpoint ep, http::ParseEndpoint(url, &path));
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (!path.empty() && path.front() != '/') path.insert(path.begin(), '/');
  if (path.find_first_of("?#") != std::string::npos) {
    return Status::InvalidArgument("origin " + std::string(url) + ": no query or fragment allowed");
  }
  return Origin{ep, path};
}

bool CleanTarget(std::string_view t) {
  for (unsigned char c : t) {
    if (c <= 0x20 || c == 0x7F) return false;
  }
  return true;
}

}  // namespace

Result<Routing> ParseRouting(std::string_view origin, const std::vector<std::string>& host_map) {
  Routing r;
  if (!origin.empty()) {
    auto o = ParseOrigin(origin);
    if (!o.ok()) return o.status().WithContext("--origin");
    r.fallback = *o;
  }
  for (const std::string& item : host_map) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument("--origin-host-map " + item + ": expected HOST=URL");
    }
    std::string host = HostOnly(item.substr(0, eq));
    for (const auto& [h, _] : r.hosts) {
      if (h == host) return Status::InvalidArgument("--origin-host-map: host " + host + " given twice");
    }
    auto o = ParseOrigin(std::string_view(item).substr(eq + 1));
    if (!o.ok()) return o.status().WithContext("--origin-host-map " + host);
    r.hosts.emplace_back(host, *o);
  }
  if (!r.fallback && r.hosts.empty()) {
    return Status::InvalidArgument("no origin: give --origin URL or --origin-host-map HOST=URL");
  }
  return r;
}

Result<Route> RouteRequest(const Routing& routing, std::string_view host_header,
                           std::string_view target) {
  if (target.empty() || !CleanTarget(target)) return Status::InvalidArgument("bad request-target");
  std::string host = HostOnly(host_header);
  std::string_view path = target;
  if (target.front() != '/') {
    // absolute-form: the authority in it is the host.
    std::string_view rest;
    std::string_view lower = target.substr(0, 8);
    if (AsciiLower(lower.substr(0, 7)) == "http://") {
      rest = target.substr(7);
    } else if (AsciiLower(lower) == "https://") {
      rest = target.substr(8);
    } else {
      return Status::InvalidArgument("request-target must be origin-form or absolute-form");
    }
    size_t slash = rest.find_first_of("/?");
    host = HostOnly(rest.substr(0, slash));
    path = slash == std::string_view::npos ? std::string_view("/") : rest.substr(slash);
    if (host.empty() || host.find('@') != std::string::npos) {
      return Status::InvalidArgument("bad authority in request-target");
    }
  }
  std::string origin_form = path.front() == '?' ? "/" + std::string(path) : std::string(path);
  Route route;
  for (const auto& [h, o] : routing.hosts) {
    if (h == host) route.origin = &o;
  }
  if (route.origin == nullptr && routing.fallback) route.origin = &*routing.fallback;
  if (route.origin == nullptr) {
    return Status(ErrorCode::kNotFound, "no origin is configured for host '" + host + "'");
  }
  route.host = host;
  route.path = origin_form;
  route.target = route.origin->base_path + origin_form;
  route.cache_key = route.origin->endpoint.ToString() + route.target;
  return route;
}

}  // namespace ferry::cache
