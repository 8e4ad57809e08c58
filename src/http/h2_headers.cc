#include "http/h2_headers.h"

#include "base/strings.h"

namespace ferry::http {
namespace {

bool NoBodyStatus(int status) {
  return status == 304 || status == 204 || (status >= 100 && status < 200);
}

}  // namespace

Result<ServerRequest> RequestFromH2(const Headers& fields) {
  ServerRequest req;
  req.version = 20;
  std::string method, path, authority, cookie;
  for (const auto& [name, value] : fields) {
    if (name == ":method") {
      method = value;
    } else if (name == ":path") {
      path = value;
    } else if (name == ":authority") {
      authority = value;
    } else if (!name.empty() && name[0] == ':') {
      continue;  // :scheme (and :protocol): nothing ferry routes on
    } else if (name == "cookie") {
      cookie += (cookie.empty() ? "" : "; ") + value;
    } else {
      req.headers.emplace_back(name, value);
    }
  }
  if (method.empty() || path.empty())
    return Status::InvalidArgument("a request without :method or :path");
  if (method == "CONNECT") return Status::InvalidArgument("CONNECT is not served");
  if (!authority.empty()) {
    SetHeader(&req.headers, "host", authority);
  } else if (HeaderValue(req.headers, "host").empty()) {
    return Status::InvalidArgument("a request without :authority or Host");
  }
  if (!cookie.empty()) req.headers.emplace_back("cookie", std::move(cookie));
  req.method = std::move(method);
  req.target = std::move(path);
  return req;
}

Headers ResponseFieldsForH2(const ServerResponse& r) {
  Headers out;
  for (auto& [name, value] : EndToEnd(r.headers)) out.emplace_back(AsciiLower(name), value);
  std::optional<uint64_t> length;
  if (r.head_length) {
    length = r.head_length;
  } else if (r.head_chunked) {
    length = std::nullopt;
  } else if (r.stream) {
    length = r.stream_length;
  } else if (!NoBodyStatus(r.status)) {
    length = r.body.size();
  }
  if (length) out.emplace_back("content-length", std::to_string(*length));
  return out;
}

bool H2ResponseHasBody(const ServerResponse& r, bool head_request) {
  return !head_request && !r.head_length && !r.head_chunked && !NoBodyStatus(r.status);
}

}  // namespace ferry::http
