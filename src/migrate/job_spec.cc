#include "migrate/job_spec.h"

#include <nlohmann/json.hpp>

#include "base/json_text.h"

namespace ferry::migrate {

const char* ToString(Overwrite o) {
  switch (o) {
    case Overwrite::kChanged: return "changed";
    case Overwrite::kAlways: return "always";
    case Overwrite::kNever: return "never";
  }
  return "?";
}

Result<Overwrite> ParseOverwrite(const std::string& s) {
  if (s == "changed") return Overwrite::kChanged;
  if (s == "always") return Overwrite::kAlways;
  if (s == "never") return Overwrite::kNever;
  return Status::InvalidArgument("--overwrite must be changed, always or never, not \"" + s + "\"");
}

std::string SpecToJson(const JobSpec& s) {
  nlohmann::json j;
  j["src"] = s.src;
  j["dst"] = s.dst;
  j["src_profile"] = s.src_profile;
  j["dst_profile"] = s.dst_profile;
  j["concurrency"] = s.concurrency;
  j["part_concurrency"] = s.part_concurrency;
  j["list_concurrency"] = s.list_concurrency;
  j["list_chunk"] = s.list_chunk;
  j["include"] = s.filter.include;
  j["exclude"] = s.filter.exclude;
  if (s.filter.min_size) j["min_size"] = *s.filter.min_size;
  if (s.filter.max_size) j["max_size"] = *s.filter.max_size;
  if (s.filter.newer_than_ms) j["newer_than_ms"] = *s.filter.newer_than_ms;
  if (s.filter.older_than_ms) j["older_than_ms"] = *s.filter.older_than_ms;
  j["overwrite"] = ToString(s.overwrite);
  j["multipart_threshold"] = s.multipart_threshold;
  j["part_size"] = s.part_size;
  j["bwlimit"] = s.bwlimit;
  j["tps_limit"] = s.tps_limit;
  j["max_attempts"] = s.max_attempts;
  j["dry_run"] = s.dry_run;
  j["server_side_copy"] = s.server_side_copy;
  j["dst_empty_at_start"] = s.dst_empty_at_start;
  j["pool"] = s.pool;
  j["filter_prefix"] = s.filter_prefix;
  j["top_level_only"] = s.top_level_only;
  if (!s.range_after.empty()) j["range_after"] = s.range_after;
  if (!s.range_upper.empty()) j["range_upper"] = s.range_upper;
  if (s.list_by_prefixes) j["list_by_prefixes"] = true;
  if (s.since_ms > 0) {
    j["since_ms"] = s.since_ms;
    j["since_job"] = s.since_job;
  }
  if (s.delete_extraneous) {
    j["delete"] = true;
    j["max_delete"] = s.max_delete;
  }
  return DumpJson(j);  // create.cc refuses text that is not UTF-8
}

Result<JobSpec> SpecFromJson(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::Corruption("job spec is not JSON");
  JobSpec s;
  try {
    s.src = j.at("src").get<std::string>();
    s.dst = j.at("dst").get<std::string>();
    s.src_profile = j.value("src_profile", "");
    s.dst_profile = j.value("dst_profile", "");
    s.concurrency = JsonIntOr(j, "concurrency", s.concurrency);
    s.part_concurrency = JsonIntOr(j, "part_concurrency", s.part_concurrency);
    s.list_concurrency = JsonIntOr(j, "list_concurrency", s.list_concurrency);
    s.list_chunk = JsonIntOr(j, "list_chunk", s.list_chunk);
    s.filter.include = j.value("include", std::vector<std::string>{});
    s.filter.exclude = j.value("exclude", std::vector<std::string>{});
    if (j.contains("min_size")) s.filter.min_size = JsonInt<uint64_t>(j["min_size"]);
    if (j.contains("max_size")) s.filter.max_size = JsonInt<uint64_t>(j["max_size"]);
    if (j.contains("newer_than_ms")) s.filter.newer_than_ms = JsonInt<int64_t>(j["newer_than_ms"]);
    if (j.contains("older_than_ms")) s.filter.older_than_ms = JsonInt<int64_t>(j["older_than_ms"]);
    auto ow = ParseOverwrite(j.value("overwrite", "changed"));
    if (!ow.ok()) return Status::Corruption("job spec: " + ow.status().message());
    s.overwrite = *ow;
    s.multipart_threshold = JsonIntOr(j, "multipart_threshold", s.multipart_threshold);
    s.part_size = JsonIntOr(j, "part_size", s.part_size);
    s.bwlimit = j.value("bwlimit", 0.0);
    s.tps_limit = j.value("tps_limit", 0.0);
    s.max_attempts = JsonIntOr(j, "max_attempts", s.max_attempts);
    s.dry_run = j.value("dry_run", false);
    s.server_side_copy = j.value("server_side_copy", true);
    s.dst_empty_at_start = j.value("dst_empty_at_start", false);
    s.pool = j.value("pool", false);
    s.filter_prefix = j.value("filter_prefix", "");
    s.top_level_only = j.value("top_level_only", false);
    s.range_after = j.value("range_after", "");
    s.range_upper = j.value("range_upper", "");
    s.list_by_prefixes = j.value("list_by_prefixes", false);
    s.since_ms = JsonIntOr(j, "since_ms", int64_t{0});
    s.since_job = j.value("since_job", "");
    s.delete_extraneous = j.value("delete", false);
    s.max_delete = JsonIntOr(j, "max_delete", int64_t{0});
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption(std::string("job spec: ") + e.what());
  }
  return s;
}

}  // namespace ferry::migrate
