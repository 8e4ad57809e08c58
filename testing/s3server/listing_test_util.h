#pragma once
// For the listing tests: a key index holding `keys`, and the keys a listing
// returned, in order.

#include <string>
#include <vector>

#include "listing.h"

namespace ferry::s3server {

inline KeyIndex IndexOf(const std::vector<std::string>& keys) {
  KeyIndex index;
  for (const auto& k : keys) {
    ObjectRecord r;
    r.key = k;
    index.emplace(k, r);
  }
  return index;
}

inline std::vector<std::string> KeysOf(const ListResult& r) {
  std::vector<std::string> out;
  for (const auto& o : r.objects) out.push_back(o.key);
  return out;
}

}  // namespace ferry::s3server
