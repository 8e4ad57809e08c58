// Background hydration, prefetch and readahead of a Volume: which missing
// chunk to fetch next (the snapshot's prefetch order first, then in order),
// never one another hydrator has taken. The fetch itself is Ensure's.
#include "volume/volume.h"

#include <algorithm>

#include "volume/helper_pools.h"

namespace ferry::volume {

bool Volume::PrefetchPending() const {
  std::lock_guard lock(mu_);
  return prefetching_ < std::max(1, options_.prefetch_parallel) && NextPrefetchLocked() != UINT64_MAX;
}

bool Volume::PrefetchDone() const {
  std::lock_guard lock(mu_);
  return PrefetchPresentLocked() == options_.manifest.prefetch.size();
}

size_t Volume::PrefetchPresentLocked() const {
  const auto& prefetch = options_.manifest.prefetch;
  size_t& done = prefetch_done_;
  while (done < prefetch.size() && (prefetch[done] >= bits_.size() || bits_[prefetch[done]])) ++done;
  return done;
}

uint64_t Volume::NextPrefetchLocked() const {
  const auto& prefetch = options_.manifest.prefetch;
  for (size_t k = PrefetchPresentLocked(); k < prefetch.size(); ++k) {
    uint64_t i = prefetch[k];
    if (i < bits_.size() && !bits_[i] && !hydrating_[i] && !landing_.count(i)) return i;
  }
  return UINT64_MAX;
}

void Volume::StartReadahead(uint64_t last) { StartPrefetch(last + 1, last + static_cast<uint64_t>(options_.readahead)); }

void Volume::StartPrefetch(uint64_t first, uint64_t last) {
  // Hints wait at the gate behind triggers: under a storm of triggers they
  // must not pile up threads without bound.
  constexpr int kMaxHelpers = 64;
  std::vector<uint64_t> picks;
  {
    std::lock_guard lock(mu_);
    for (uint64_t c = first; c <= last && c < bits_.size() && helpers_ < kMaxHelpers; ++c) {
      // (busy: a client writes it whole, or a fill installs it)
      if (bits_[c] || hydrating_[c] || busy_[c] || landing_.count(c)) continue;
      hydrating_[c] = true;  // hydrators pass it by
      ++helpers_;
      picks.push_back(c);
    }
  }
  auto done = [this](uint64_t c) {
    std::lock_guard lock(mu_);
    hydrating_[c] = false;
    --helpers_;
    helpers_cv_.notify_all();
  };
  for (size_t k = 0; k < picks.size(); ++k) {
    bool taken = HelperPool().Submit([this, c = picks[k], done] {
      (void)Ensure(c, FetchPriority::kPrefetch);  // a failure: the client's own read will say
      done(c);
    });
    if (!taken) done(picks[k]);  // no thread to be had: it was only a hint
  }
}

Result<bool> Volume::HydrateNext() { return FetchNext(false, FetchPriority::kBackground); }

Result<bool> Volume::PrefetchNext() { return FetchNext(true, FetchPriority::kPrefetch); }

Result<bool> Volume::FetchNext(bool prefetch_only, FetchPriority priority) {
  uint64_t pick = UINT64_MAX;
  {
    std::lock_guard lock(mu_);
    const auto& prefetch = options_.manifest.prefetch;
    if (prefetch_only) {
      if (prefetching_ >= std::max(1, options_.prefetch_parallel)) return false;
      pick = NextPrefetchLocked();
      if (pick != UINT64_MAX) ++prefetching_;
    } else {
      const size_t total = prefetch.size() + bits_.size();
      // The prefetch order first, then the rest in order; each caller takes
      // the next chunk nobody is fetching, so several hydrators work on
      // different chunks. A chunk that failed is met again on the next lap.
      for (size_t scanned = 0; scanned < total; ++scanned) {
        if (next_ >= total) next_ = 0;
        uint64_t i = next_ < prefetch.size() ? prefetch[next_] : next_ - prefetch.size();
        ++next_;
        if (i < bits_.size() && !bits_[i] && !hydrating_[i] && !landing_.count(i)) {
          pick = i;
          break;
        }
      }
    }
    if (pick != UINT64_MAX) hydrating_[pick] = true;
  }
  if (pick == UINT64_MAX) return false;  // all present, or the rest being fetched by others
  Status st = Ensure(pick, priority);
  {
    std::lock_guard lock(mu_);
    hydrating_[pick] = false;
    if (prefetch_only) --prefetching_;
  }
  FERRY_RETURN_IF_ERROR(st);
  return true;
}

}  // namespace ferry::volume
