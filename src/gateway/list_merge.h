#pragma once
// A gateway's listing (ListObjectsV2) while a migration runs, as a pure
// function: the destination's page merged with the source's (the keys not
// yet copied are still only there), keys deleted through the gateway left
// out, and the page cut where either side's page ended, so no key is
// skipped between two pages however the two sides' pages fall.

#include <set>
#include <string>
#include <vector>

#include "store/object_store.h"

namespace ferry::gateway {

// One side's page, its keys and prefixes in the client's namespace (the
// job's prefix taken off), in byte order.
struct SideListing {
  std::vector<ObjectInfo> objects;
  std::vector<std::string> prefixes;  // common prefixes (with a delimiter)
  bool truncated = false;             // the side has more after its last item
};

struct MergedListing {
  std::vector<ObjectInfo> objects;
  std::vector<std::string> prefixes;
  bool truncated = false;
  // With truncated: list again after this name (after a common prefix,
  // the prefix and a 0xff byte: past every key under it).
  std::string next_after;
};

// Items (objects and prefixes, by name) of `dst` and `src` (null: the
// destination alone), a key in both taken from `dst`, source keys in
// `deleted` left out; at most `max_keys` items, never past the last item
// of a truncated side (what lies beyond it is not known yet).
MergedListing MergeListings(const SideListing& dst, const SideListing* src,
                            const std::set<std::string>& deleted, int max_keys);

}  // namespace ferry::gateway
