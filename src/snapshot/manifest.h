#pragma once
// A snapshot's manifest: which content-addressed chunk holds each piece of
// a raw disk image. Chunks are named by the SHA-256 of their bytes, so
// snapshots that share data share chunks; an all-zero chunk is not stored
// (its entry is empty). The manifest may carry a prefetch order: the chunk
// indices a booting clone touched first.
//
// Encoding (one JSON object, self-checking):
//   {"format": "ferry-snapshot-1", "name": ..., "image_size": N,
//    "chunk_size": C, "created": "2026-12-03T06:00:00Z",
//    "chunks": ["<64 hex>" | "", ...], "prefetch": [i, ...],
//    "sha256": "<64 hex over the same object without this field>"}
// An order that learns (learned_order.h) also carries, beside "prefetch":
//   "learned": {"clones": K, "observations": O, "seen": [n, ...],
//               "rank_sum": [r, ...]}
// (per prefetch entry, parallel to it); absent until a clone's first
// touches were merged, so older manifests decode and check as before. (A
// ferry from before it refuses a manifest that has it: its checksum
// leaves the object out.)
// Decoding checks every field (chunk count = ceil(N / C), C a power of two
// of at least 4 KiB, hashes 64 lower-case hex digits, prefetch indices in
// range and not repeated) and the checksum: a damaged or hand-edited
// manifest is refused with a one-line kCorruption, never half-used.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ferry::snapshot {

inline constexpr uint64_t kMinChunkSize = 4096;
inline constexpr uint64_t kMaxChunkSize = 64ull << 20;

struct Manifest {
  std::string name;
  uint64_t image_size = 0;
  uint64_t chunk_size = 1 << 20;
  std::string created;              // RFC 3339 UTC
  std::vector<std::string> chunks;  // SHA-256 hex per chunk; "" = all zeros
  std::vector<uint32_t> prefetch;   // chunk indices, first needed first
  // What the order learned (learned_order.h); all empty/0 when nothing.
  uint32_t learned_clones = 0;        // clones' first touches merged
  uint32_t learned_observations = 0;  // those, and the order they started from
  std::vector<uint32_t> prefetch_seen;      // per prefetch entry: observations it was in
  std::vector<uint64_t> prefetch_rank_sum;  // and the sum of its ranks in them

  uint64_t ChunkCount() const { return (image_size + chunk_size - 1) / chunk_size; }
  // Bytes of chunk `i` (the last one may be short).
  uint64_t ChunkLength(uint64_t i) const;
};

// A snapshot name: 1-128 of [A-Za-z0-9._-], not starting with '.'.
bool ValidSnapshotName(std::string_view name);

std::string EncodeManifest(const Manifest& m);
Result<Manifest> DecodeManifest(std::string_view text);

}  // namespace ferry::snapshot
