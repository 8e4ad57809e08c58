#pragma once
// Which parent tier a key's fill goes to, when a cache has several
// (`cache serve --parent` given more than once): rendezvous hashing
// (highest random weight), so each key has one parent and the parents'
// caches split the key space between them; when one is down its keys go
// to their next choice, spread over the others, and no other key moves.
// Pure.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::cache {

// The parents (by a stable name each, e.g. "host:port") in the order
// `key`'s fill tries them: its first choice first.
std::vector<size_t> ParentOrder(std::string_view key, const std::vector<std::string>& parents);

}  // namespace ferry::cache
