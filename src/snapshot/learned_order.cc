#include "snapshot/learned_order.h"

#include <algorithm>
#include <unordered_map>

namespace ferry::snapshot {

void MergeFirstTouches(Manifest* m, const std::vector<uint32_t>& touches, size_t max_chunks) {
  if (m->learned_clones >= kMaxLearnedClones || max_chunks == 0) return;
  struct Stat {
    uint32_t seen = 0;
    uint64_t rank_sum = 0;
  };
  std::unordered_map<uint32_t, Stat> stats;
  const bool learning = m->learned_clones > 0;
  for (size_t k = 0; k < m->prefetch.size(); ++k) {
    Stat& s = stats[m->prefetch[k]];
    s.seen = learning ? m->prefetch_seen[k] : 1;
    s.rank_sum = learning ? m->prefetch_rank_sum[k] : k;
  }
  uint32_t observations = learning ? m->learned_observations : (m->prefetch.empty() ? 0 : 1);
  std::vector<bool> taken(m->chunks.size(), false);
  uint64_t rank = 0;
  for (uint32_t c : touches) {
    if (rank >= max_chunks) break;
    if (c >= m->chunks.size() || m->chunks[c].empty() || taken[c]) continue;
    taken[c] = true;
    Stat& s = stats[c];
    s.seen++;
    s.rank_sum += rank++;
  }
  ++observations;
  struct Entry {
    uint32_t chunk;
    Stat stat;
    double mean() const { return static_cast<double>(stat.rank_sum) / stat.seen; }
  };
  std::vector<Entry> kept;
  for (const auto& [chunk, s] : stats) {
    if (static_cast<uint64_t>(s.seen) * 4 >= observations) kept.push_back({chunk, s});
  }
  auto by_need = [](const Entry& a, const Entry& b) {
    if (a.mean() != b.mean()) return a.mean() < b.mean();
    return a.chunk < b.chunk;
  };
  if (kept.size() > max_chunks) {
    std::sort(kept.begin(), kept.end(), [&](const Entry& a, const Entry& b) {
      if (a.stat.seen != b.stat.seen) return a.stat.seen > b.stat.seen;
      return by_need(a, b);
    });
    kept.resize(max_chunks);
  }
  std::sort(kept.begin(), kept.end(), by_need);
  m->prefetch.clear();
  m->prefetch_seen.clear();
  m->prefetch_rank_sum.clear();
  for (const Entry& e : kept) {
    m->prefetch.push_back(e.chunk);
    m->prefetch_seen.push_back(e.stat.seen);
    m->prefetch_rank_sum.push_back(e.stat.rank_sum);
  }
  m->learned_clones++;
  m->learned_observations = observations;
}

}  // namespace ferry::snapshot
