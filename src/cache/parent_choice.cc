#include "cache/parent_choice.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "crypto/digest.h"

namespace ferry::cache {
namespace {

// The first 8 bytes of SHA-256 over parent, a separator and key.
uint64_t ParentWeight(const std::string& parent, std::string_view key) {
  std::string in = parent;
  in.push_back('\n');
  in.append(key);
  Sha256Digest d = Sha256(in);
  uint64_t w = 0;
  for (size_t i = 0; i < 8; ++i) w = (w << 8) | d[i];
  return w;
}

}  // namespace

std::vector<size_t> ParentOrder(std::string_view key, const std::vector<std::string>& parents) {
  std::vector<uint64_t> weight(parents.size());
  for (size_t i = 0; i < parents.size(); ++i) weight[i] = ParentWeight(parents[i], key);
  std::vector<size_t> order(parents.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return weight[a] != weight[b] ? weight[a] > weight[b] : parents[a] < parents[b];
  });
  return order;
}

}  // namespace ferry::cache
