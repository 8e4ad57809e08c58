#include "state/key_marks.h"

#include <algorithm>

namespace ferry::state {

std::optional<KeyMark> KeyMarkFromString(const std::string& s) {
  for (KeyMark m : {KeyMark::kClaimed, KeyMark::kCopied, KeyMark::kWritten, KeyMark::kDeleted}) {
    if (s == ToString(m)) return m;
  }
  return std::nullopt;
}

bool HeldByOther(const std::string& holder, int64_t lease_until_ms, const std::string& owner,
                 int64_t now_ms) {
  return !holder.empty() && holder != owner && lease_until_ms > now_ms;
}

KeyClaim DecideKeyClaim(const std::optional<KeyRow>& row, const std::optional<StoredMark>& mark,
                        const std::string& owner, int64_t now_ms, bool insert) {
  KeyClaim claim;
  if (row) {
    if (HeldByOther(row->owner, row->lease_until_ms, owner, now_ms)) {
      claim.kind = KeyClaim::Kind::kBusy;
      return claim;
    }
    claim.kind = KeyClaim::Kind::kClaimed;
    claim.from_row = true;
    claim.object = row->object;
    return claim;
  }
  if (mark && mark->mark != KeyMark::kClaimed) {
    claim.kind = KeyClaim::Kind::kRecorded;
    claim.mark = mark->mark;
    claim.size = mark->size;
    claim.etag = mark->etag;
    return claim;
  }
  if (mark && HeldByOther(mark->owner, mark->lease_until_ms, owner, now_ms)) {
    claim.kind = KeyClaim::Kind::kBusy;
    return claim;
  }
  if (mark || insert) claim.kind = KeyClaim::Kind::kClaimed;
  return claim;  // else kNone
}

bool MayMarkKey(const std::optional<KeyRow>& row, const std::optional<StoredMark>& old,
                const std::string& owner, KeyMark mark, int64_t now_ms) {
  if (row && HeldByOther(row->owner, row->lease_until_ms, owner, now_ms)) return false;
  if (old && old->mark == KeyMark::kClaimed &&
      HeldByOther(old->owner, old->lease_until_ms, owner, now_ms)) {
    return false;
  }
  // A copy never replaces what a client wrote or deleted meanwhile (a copy
  // whose claim lapsed and was taken by a write).
  return !(mark == KeyMark::kCopied && old && old->mark != KeyMark::kClaimed &&
           old->mark != KeyMark::kCopied);
}

bool KeyUnlisted(const std::vector<ShardRecord>& shards, const std::string& key) {
  bool unlisted = false;
  for (const ShardRecord& s : shards) {
    if (!s.ranged) return false;
    if (key.compare(0, s.prefix.size(), s.prefix) != 0) continue;
    if (key <= s.lower || (!s.upper.empty() && key > s.upper)) continue;
    unlisted = !s.done && key > std::max(s.lower, s.cursor);
  }
  return unlisted;
}

void ListedMarkCounts::CountFinal(const StoredMark& m) {
  ++listed;
  if (m.mark == KeyMark::kCopied) {
    ++transferred;
    bytes += static_cast<int64_t>(m.size);
  } else {
    ++skipped;
  }
}

}  // namespace ferry::state
