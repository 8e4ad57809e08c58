#include "base/json_text.h"
#include "migrate/since_last.h"

#include <nlohmann/json.hpp>

namespace ferry::migrate {

std::string JobScope(const JobSpec& s) {
  nlohmann::json j;
  j["src"] = s.src;
  j["dst"] = s.dst;
  j["src_profile"] = s.src_profile;
  j["dst_profile"] = s.dst_profile;
  j["include"] = s.filter.include;
  j["exclude"] = s.filter.exclude;
  j["min_size"] = s.filter.min_size.value_or(0);
  j["max_size"] = s.filter.max_size.value_or(UINT64_MAX);
  j["newer_than_ms"] = s.filter.newer_than_ms.value_or(0);
  j["older_than_ms"] = s.filter.older_than_ms.value_or(0);
  j["filter_prefix"] = s.filter_prefix;
  j["top_level_only"] = s.top_level_only;
  j["range_after"] = s.range_after;
  j["range_upper"] = s.range_upper;
  j["overwrite"] = ToString(s.overwrite);  // a `never` job may have kept stale copies
  return DumpJson(j);
}

Result<std::optional<state::JobRecord>> LastCompletedLike(state::StateStore& store,
                                                          const JobSpec& spec) {
  const std::string scope = JobScope(spec);
  FERRY_ASSIGN_OR_RETURN(auto live, store.ListJobs());
  FERRY_ASSIGN_OR_RETURN(auto archived, store.ListArchivedJobs());
  std::optional<state::JobRecord> best;
  for (const auto* jobs : {&live, &archived}) {
    for (const state::JobRecord& j : *jobs) {
      if (j.state != state::JobState::kCompleted || j.started_ms <= 0) continue;
      if (best && best->created_ms >= j.created_ms) continue;
      auto other = SpecFromJson(j.spec);
      if (!other.ok() || other->dry_run || JobScope(*other) != scope) continue;
      best = j;
    }
  }
  return best;
}

}  // namespace ferry::migrate
