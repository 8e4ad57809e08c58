#include "volume/order_learner.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "snapshot/learned_order.h"

namespace ferry::volume {

bool TraceSettled(std::chrono::milliseconds since_first, std::chrono::milliseconds since_last_new,
                  const LearnSettings& s) {
  return since_last_new >= s.settle || since_first >= s.window;
}

void OrderLearner::Watch(const std::string& name, const std::string& from, Touches touches) {
  std::lock_guard lock(mu_);
  watched_[name] = Watched{from, std::move(touches)};
}

void OrderLearner::Forget(const std::string& name) {
  std::lock_guard lock(mu_);
  watched_.erase(name);
}

void OrderLearner::Poll(std::chrono::steady_clock::time_point now) {
  // Snapshot -> (clone, its trace), for the traces that settled.
  std::map<std::string, std::vector<std::pair<std::string, std::vector<uint32_t>>>> settled;
  {
    std::lock_guard lock(mu_);
    for (auto it = watched_.begin(); it != watched_.end();) {
      Watched& w = it->second;
      std::vector<uint32_t> touches = w.touches();
      if (touches.size() != w.count) {
        if (w.count == 0) w.first = now;
        w.count = touches.size();
        w.last_new = now;
      }
      auto ms = [&](std::chrono::steady_clock::time_point t) {
        return std::chrono::duration_cast<std::chrono::milliseconds>(now - t);
      };
      if (w.count == 0 || !TraceSettled(ms(w.first), ms(w.last_new), s_)) {
        ++it;
        continue;
      }
      settled[w.from].emplace_back(it->first, std::move(touches));
      it = watched_.erase(it);
    }
  }
  for (const auto& [from, traces] : settled) {
    size_t chunks = 0;
    uint32_t clones = 0;
    bool changed = false;
    Status st = update_(from, [&](snapshot::Manifest* m) {
      uint32_t before = m->learned_clones;
      size_t max_chunks = std::max<size_t>(1, static_cast<size_t>(s_.max_bytes / m->chunk_size));
      for (const auto& [_, trace] : traces) snapshot::MergeFirstTouches(m, trace, max_chunks);
      chunks = m->prefetch.size();
      clones = m->learned_clones;
      changed = m->learned_clones != before;
      return changed;
    });
    if (!st.ok()) {
      spdlog::warn("volume: {}: first touches of {} clone(s) not learned: {}", from, traces.size(),
                   st.ToString());
      continue;
    }
    if (!changed) continue;  // it learned from snapshot::kMaxLearnedClones clones already
    {
      std::lock_guard lock(mu_);
      merged_ += traces.size();
    }
    spdlog::info(
        "volume: {}: learned the first touches of {} (prefetch order: {} chunks from {} clones)",
        from,
        traces.front().first +
            (traces.size() > 1 ? " and " + std::to_string(traces.size() - 1) + " more" : ""),
        chunks, clones);
  }
}

uint64_t OrderLearner::merged() const {
  std::lock_guard lock(mu_);
  return merged_;
}

size_t OrderLearner::watching() const {
  std::lock_guard lock(mu_);
  return watched_.size();
}

}  // namespace ferry::volume
