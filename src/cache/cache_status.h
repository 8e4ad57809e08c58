#pragma once
// What the cache did for a request, as its X-Cache header says it.

#include <string_view>

namespace ferry::cache {

enum class CacheStatus {
  kHit,      // a fresh stored entry (or another request's fill of it)
  kMiss,     // filled from upstream
  kExpired,  // a stale entry revalidated or replaced upstream
  kStale,    // a stale entry served because upstream failed
  kBypass,   // not cacheable here (method, no-store, admin, errors before lookup)
};

constexpr std::string_view CacheStatusName(CacheStatus s) {
  switch (s) {
    case CacheStatus::kHit: return "HIT";
    case CacheStatus::kMiss: return "MISS";
    case CacheStatus::kExpired: return "EXPIRED";
    case CacheStatus::kStale: return "STALE";
    case CacheStatus::kBypass: return "BYPASS";
  }
  return "BYPASS";
}

}  // namespace ferry::cache
