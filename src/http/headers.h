#pragma once
// HTTP header fields in order, names as sent (compare them case-blind).

#include <string>
#include <utility>
#include <vector>

namespace ferry::http {

using Headers = std::vector<std::pair<std::string, std::string>>;

}  // namespace ferry::http
