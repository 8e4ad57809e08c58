#include "net/tls_names.h"

#include <algorithm>

namespace ferry::net {
namespace {

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualBlind(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return Lower(x) == Lower(y); });
}

std::string_view StripDot(std::string_view s) {
  if (!s.empty() && s.back() == '.') s.remove_suffix(1);
  return s;
}

bool IsWildcard(std::string_view pattern) {
  return pattern.size() > 2 && pattern.substr(0, 2) == "*.";
}

}  // namespace

bool HostNameMatches(std::string_view pattern, std::string_view host) {
  pattern = StripDot(pattern);
  host = StripDot(host);
  if (pattern.empty() || host.empty()) return false;
  if (!IsWildcard(pattern)) {
    return pattern.find('*') == std::string_view::npos && EqualBlind(pattern, host);
  }
  std::string_view suffix = pattern.substr(1);  // ".example.com"
  // At least two labels after the wildcard, and no other wildcard.
  if (suffix.find('*') != std::string_view::npos ||
      std::count(suffix.begin(), suffix.end(), '.') < 2)
    return false;
  const size_t dot = host.find('.');
  if (dot == 0 || dot == std::string_view::npos) return false;
  return EqualBlind(host.substr(dot), suffix);
}

size_t PickCertificate(const std::vector<std::vector<std::string>>& names,
                       std::string_view server_name) {
  if (server_name.empty()) return 0;
  for (bool wildcard : {false, true}) {
    for (size_t i = 0; i < names.size(); ++i) {
      for (const auto& n : names[i]) {
        if (IsWildcard(n) == wildcard && HostNameMatches(n, server_name)) return i;
      }
    }
  }
  return 0;
}

std::string AlpnWire(const std::vector<std::string>& protocols) {
  std::string out;
  for (const auto& p : protocols) {
    out.push_back(static_cast<char>(p.size()));
    out += p;
  }
  return out;
}

std::optional<std::string> SelectAlpn(std::string_view offered,
                                      const std::vector<std::string>& ours) {
  std::vector<std::string_view> theirs;
  while (!offered.empty()) {
    const size_t n = static_cast<unsigned char>(offered[0]);
    if (n == 0 || n + 1 > offered.size()) return std::nullopt;
    theirs.push_back(offered.substr(1, n));
    offered.remove_prefix(n + 1);
  }
  for (const auto& p : ours) {
    if (std::find(theirs.begin(), theirs.end(), p) != theirs.end()) return p;
  }
  return std::nullopt;
}

}  // namespace ferry::net
