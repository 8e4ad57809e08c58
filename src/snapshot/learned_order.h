#pragma once
// Prefetch orders that learn from the clones that boot (`ferry volume
// serve --learn-orders`): each clone's first touches, the chunks its
// clients touched in the order they first did, merged into its snapshot's
// order. Pure.
//
// - Every chunk of the order keeps how many observations it was in (seen)
//   and the sum of its ranks there (its place in a clone's first touches;
//   in the order the manifest had before learning began, its index: that
//   order, predicted or recorded, counts as one observation).
// - The merged order keeps the chunks seen in at least a quarter of the
//   observations, sorted by their mean rank (the order of first need; ties
//   by index). A chunk the prediction named but no clone touched falls out
//   once four clones have been merged; a chunk one clone of many touched
//   late does not get in.
// - Bounded: at most `max_chunks`, the most seen kept (ties: the earliest
//   needed), and a clone's touches count only up to `max_chunks` of them.
// - Chunks of the snapshot that are all zeros (never fetched) and indices
//   outside it are ignored.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "snapshot/manifest.h"

namespace ferry::snapshot {

// A snapshot stops learning after this many clones: its order has settled,
// and its manifest is not rewritten for every clone of a fleet.
inline constexpr uint32_t kMaxLearnedClones = 16;

// Merges one clone's first touches into m's prefetch order (and its
// learned counts). Merging after kMaxLearnedClones changes nothing.
void MergeFirstTouches(Manifest* m, const std::vector<uint32_t>& touches, size_t max_chunks);

}  // namespace ferry::snapshot
