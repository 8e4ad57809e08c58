#include "migrate/prune.h"

#include <mutex>
#include <vector>

#include "engine/parallel.h"
#include "migrate/spill_sort.h"

namespace ferry::migrate {

Result<PruneResult> PruneDestination(VerifyOptions o, int64_t max_delete, int concurrency,
                                     const KeptByClients& kept,
                                     const std::function<void(const std::string&)>& on_deleted) {
  SpillSorter extras(o.spill_dir, o.spill_records);
  PruneResult r;
  Status saved;
  std::vector<std::string> waiting;  // extras not yet asked about
  // The waiting extras a client did not write go to the sort.
  auto settle = [&]() -> Status {
    std::set<std::string> clients;
    if (kept && !waiting.empty()) {
      std::vector<std::string> src_keys;
      for (const auto& k : waiting) src_keys.push_back(o.src_prefix + k);
      FERRY_ASSIGN_OR_RETURN(clients, kept(src_keys));
    }
    for (const auto& k : waiting) {
      if (clients.count(o.src_prefix + k) > 0) {
        ++r.kept;
        continue;
      }
      ++r.extra;
      FERRY_RETURN_IF_ERROR(extras.Add({k, ""}));
    }
    waiting.clear();
    return Status::Ok();
  };
  o.keys_only = true;
  o.on_difference = [&](const Difference& d) {
    if (d.kind != Difference::Kind::kExtra || !saved.ok()) return;
    waiting.push_back(d.key);
    if (waiting.size() >= 1000) saved = settle();
  };
  FERRY_RETURN_IF_ERROR(RunVerify(o).status());
  FERRY_RETURN_IF_ERROR(saved);
  FERRY_RETURN_IF_ERROR(settle());
  if (r.extra > max_delete) {
    r.refused = true;
    return r;
  }
  // In batches, each deleted in parallel: the keys come off the sort in order.
  std::mutex mu;
  for (;;) {
    std::vector<std::string> batch;
    while (batch.size() < 1000) {
      FERRY_ASSIGN_OR_RETURN(std::optional<SpillRecord> rec, extras.Next());
      if (!rec) break;
      batch.push_back(o.dst_prefix + rec->key);
    }
    if (batch.empty()) return r;
    FERRY_RETURN_IF_ERROR(RunParallel(static_cast<int>(batch.size()), concurrency, [&](int i) {
      Status s = o.dst->Delete(batch[static_cast<size_t>(i)]);
      if (!s.ok()) return s.WithContext("delete " + batch[static_cast<size_t>(i)]);
      std::lock_guard<std::mutex> lock(mu);
      ++r.deleted;
      if (on_deleted) on_deleted(batch[static_cast<size_t>(i)]);
      return Status::Ok();
    }));
  }
}

}  // namespace ferry::migrate
