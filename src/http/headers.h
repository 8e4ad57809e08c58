#pragma once
// HTTP header fields in order, names as sent (compare them case-blind), and
// the few operations on them every hop needs.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ferry::http {

using Headers = std::vector<std::pair<std::string, std::string>>;

// The first value of `name` (case-blind), "" when absent.
std::string HeaderValue(const Headers& h, std::string_view name);
// Replaces every field `name` by one with `value`, at the end.
void SetHeader(Headers* h, std::string_view name, std::string value);
void RemoveHeader(Headers* h, std::string_view name);
// Without hop-by-hop fields (RFC 9110 7.6.1, and any the Connection field
// names) and without Content-Length.
Headers EndToEnd(const Headers& h);

}  // namespace ferry::http
