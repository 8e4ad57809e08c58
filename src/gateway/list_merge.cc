#include "gateway/list_merge.h"

#include <algorithm>
#include <map>
#include <optional>

namespace ferry::gateway {
namespace {

// After a common prefix the next page starts past every key under it: no
// byte of a UTF-8 key is 0xff.
constexpr char kPastPrefix = '\xff';

struct Item {
  const ObjectInfo* object = nullptr;  // null: a common prefix
};

// The last name a truncated side returned: nothing past it is known.
std::optional<std::string> Horizon(const SideListing& side) {
  if (!side.truncated) return std::nullopt;
  std::string last;
  if (!side.objects.empty()) last = side.objects.back().key;
  if (!side.prefixes.empty()) last = std::max(last, side.prefixes.back());
  if (last.empty()) return std::nullopt;  // nothing returned: no bound
  return last;
}

}  // namespace

MergedListing MergeListings(const SideListing& dst, const SideListing* src,
                            const std::set<std::string>& deleted, int max_keys) {
  std::map<std::string, Item> items;
  if (src != nullptr) {
    for (const ObjectInfo& o : src->objects) {
      if (!deleted.count(o.key)) items[o.key] = Item{&o};
    }
    for (const std::string& p : src->prefixes) items[p] = Item{};
  }
  for (const ObjectInfo& o : dst.objects) items[o.key] = Item{&o};
  for (const std::string& p : dst.prefixes) items.emplace(p, Item{});

  std::optional<std::string> horizon = Horizon(dst);
  if (src != nullptr) {
    if (auto h = Horizon(*src)) horizon = horizon ? std::min(*horizon, *h) : *h;
  }
  MergedListing out;
  const size_t limit = static_cast<size_t>(std::max(0, max_keys));
  size_t taken = 0;
  for (const auto& [name, item] : items) {
    if (horizon && name > *horizon) {
      out.truncated = true;
      break;
    }
    if (taken == limit) {
      out.truncated = true;
      break;
    }
    if (item.object) {
      out.objects.push_back(*item.object);
      out.next_after = name;
    } else {
      out.prefixes.push_back(name);
      out.next_after = name + kPastPrefix;  // past every key under it
    }
    ++taken;
  }
  // A truncated side whose every item was taken still has more.
  if (!out.truncated && horizon) out.truncated = true;
  if (!out.truncated) out.next_after.clear();
  return out;
}

}  // namespace ferry::gateway
