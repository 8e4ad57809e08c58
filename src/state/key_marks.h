#pragma once
// For StateStore implementations: the gateway's key marks (state_store.h
// KeyMark) as pure policy, so that every store answers ClaimKey and
// MarkKey alike. A store reads a key's pending row and mark (under its own
// locks), asks these functions, and writes what they decided.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "state/state_store.h"

namespace ferry::state {

// "claimed", "copied", "written", "deleted" (ToString(KeyMark)) back to the
// mark; nullopt for anything else (a damaged row).
std::optional<KeyMark> KeyMarkFromString(const std::string& s);

// A key's pending row in the objects table, as far as marks care.
struct KeyRow {
  ListedObject object;
  std::string owner;
  int64_t lease_until_ms = 0;
};

// A key's row in the gateway's marks table.
struct StoredMark {
  KeyMark mark = KeyMark::kClaimed;
  std::string owner;
  int64_t lease_until_ms = 0;
  uint64_t size = 0;
  std::string etag;
  bool counted = false;  // the key is in the job's counters already
};

// Whether a lease (holder, lease_until_ms) keeps `owner` out at `now_ms`.
bool HeldByOther(const std::string& holder, int64_t lease_until_ms, const std::string& owner,
                 int64_t now_ms);

// ClaimKey's answer from the stored row and mark (state_store.h): kBusy
// under another's live lease, kClaimed from the row or the claimed mark
// (or a new mark when `insert`), kRecorded for a final mark, else kNone.
// Fills kind, from_row, object, mark, size and etag; the caller fills
// listing_done, unlisted and state from the job.
KeyClaim DecideKeyClaim(const std::optional<KeyRow>& row, const std::optional<StoredMark>& mark,
                        const std::string& owner, int64_t now_ms, bool insert);

// Whether MarkKey may end `owner`'s claim with the final `mark`: not while
// another owner holds a live lease on the row or claimed mark, and never a
// copy over a client's write or delete.
bool MayMarkKey(const std::optional<KeyRow>& row, const std::optional<StoredMark>& old,
                const std::string& owner, KeyMark mark, int64_t now_ms);

// Whether `key` lies beyond where its range shard's listing has reached
// (no worker can have copied it). Ranged shards tile the job's key space
// (state_store.h ShardRecord); with any prefix shard nothing can be told,
// and the answer is false.
bool KeyUnlisted(const std::vector<ShardRecord>& shards, const std::string& key);

// What a listing page adds to the job's counters for the marked keys it
// meets: a claimed key enqueued under its owner's lease (counted by the
// store in `enqueued`), a final mark counted once.
struct ListedMarkCounts {
  int64_t enqueued = 0, listed = 0, transferred = 0, skipped = 0, bytes = 0;
  // A final mark met for the first time (not yet counted): listed, and
  // transferred with its bytes (kCopied) or skipped.
  void CountFinal(const StoredMark& m);
};

}  // namespace ferry::state
