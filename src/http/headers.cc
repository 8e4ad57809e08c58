#include "http/headers.h"

#include "base/strings.h"

namespace ferry::http {

std::string HeaderValue(const Headers& h, std::string_view name) {
  for (const auto& [k, v] : h) {
    if (EqualsIgnoreCase(k, name)) return v;
  }
  return "";
}

void SetHeader(Headers* h, std::string_view name, std::string value) {
  RemoveHeader(h, name);
  h->emplace_back(std::string(name), std::move(value));
}

void RemoveHeader(Headers* h, std::string_view name) {
  for (auto it = h->begin(); it != h->end();) it = EqualsIgnoreCase(it->first, name) ? h->erase(it) : it + 1;
}

Headers EndToEnd(const Headers& h) {
  static const char* kHopByHop[] = {"connection", "keep-alive", "proxy-connection", "proxy-authenticate",
                                    "proxy-authorization", "te", "trailer", "transfer-encoding",
                                    "upgrade", "content-length"};
  std::vector<std::string> named;  // fields the Connection header names
  std::string conn = HeaderValue(h, "connection");
  for (size_t at = 0; at <= conn.size();) {
    size_t comma = conn.find(',', at);
    if (comma == std::string::npos) comma = conn.size();
    std::string n = AsciiLower(TrimOws(std::string_view(conn).substr(at, comma - at)));
    if (!n.empty()) named.push_back(n);
    at = comma + 1;
  }
  Headers out;
  for (const auto& [k, v] : h) {
    std::string lk = AsciiLower(k);
    bool drop = false;
    for (const char* hop : kHopByHop) drop = drop || lk == hop;
    for (const auto& n : named) drop = drop || lk == n;
    if (!drop) out.emplace_back(k, v);
  }
  return out;
}

}  // namespace ferry::http
